// The gateway: every agent call passes here between a door (HTTP, MCP, CLI) and the engine. It knows
// the agent, files the call into a run, applies budgets, the breaker and policy (asking a person when
// policy says so), records each decision, and calls the engine under the agent's name. The engine
// does the work and records it; here each agent verb is one runner.call spec: its arguments for the
// record, its verdict, the engine call, and how the result fills the call.
import type { GatewayMethodHandlers, GatewayMethodParams } from '../../../shared/contracts/methods.js';
import type { ApiExecBody } from '../../../shared/types/api.js';
import type { WorkspaceDiff } from '../../../shared/types/diff.js';
import type { ExecResult } from '../../../shared/types/exec.js';
import type { Policy } from '../../../shared/types/policy.js';
import type { ApprovalInfo, RunDetail, RunInfo, ToolCallInfo, ToolName } from '../../../shared/types/run.js';
import type { SandboxInfo, SandboxSpec } from '../../../shared/types/sandbox.js';
import type { WardenEngine } from '../engine.js';
import { argvOf, type ExecHandlers } from '../podman/exec-session.js';
import { AgentLimits } from './agent-limits.js';
import { Approvals } from './approvals.js';
import { attestationDenial } from './attestation-gate.js';
import { AutoSnapshots } from './auto-snapshots.js';
import type { ContextAuditSink } from './audit-context.js';
import { CallRunner } from './call-runner.js';
import { boundArgs, type AgentContext, type CallHooks, type OnSandbox, type SandboxCall } from './call-spec.js';
import { FileVerbs } from './file-verbs.js';
import { LifecycleVerbs, pausedRefusal } from './lifecycle-verbs.js';
import { recordedDiff } from './diff-record.js';
import { createInput, createVerdict, parseSandboxSpec, sandboxToCreate } from './create-policy.js';
import { GatewayDenial } from './denial.js';
import { ExecCall, pickExec } from './exec-call.js';
import { effectivePolicy, type EffectivePolicy } from './policy-load.js';
import type { RunArchive } from './run-archive.js';
import { PolicyFile } from './policy-file.js';
import { RunStore, type Run } from './runs.js';
import { madeBy, SandboxAccess } from './sandbox-access.js';
import { SnapshotVerbs } from './snapshot-verbs.js';

export type { AgentContext } from './call-spec.js';
export { AGENT_LABEL } from './sandbox-access.js';

const SWEEP_MS = 60_000;

export interface ExecCallResult extends ExecResult {
  runId: string;
  callId: string;
}

export interface GatewayOptions {
  policy: Policy;
  policySource?: string;
  /** Follow this home's policy file: an edit applies to the next call without a restart (policy-file.ts). */
  policyHome?: string;
  /** Where runs are kept across restarts (closed with the gateway); none: in memory only. */
  runArchive?: RunArchive;
}

export class Gateway implements GatewayMethodHandlers {
  readonly runs: RunStore;
  readonly approvals: Approvals;
  private readonly runner: CallRunner;
  private readonly access: SandboxAccess;
  private readonly limits: AgentLimits;
  private readonly sweeper: NodeJS.Timeout;
  private readonly policyFile: PolicyFile;
  /** Snapshot, list, remove, reset and fork (snapshot-verbs.ts). */
  readonly snapshots: SnapshotVerbs;
  /** Read, write, list, mkdir, remove and move under /workspace (file-verbs.ts). */
  readonly files: FileVerbs;
  /** Start, stop, destroy, a new TTL, pause and resume (lifecycle-verbs.ts). */
  readonly lifecycleVerbs: LifecycleVerbs;

  constructor(
    readonly engine: WardenEngine,
    private readonly audit: ContextAuditSink,
    options: GatewayOptions,
  ) {
    this.policyFile = new PolicyFile(options.policyHome ?? null, options.policy, options.policySource ?? null);
    this.runs = new RunStore(engine.events, Date.now, options.runArchive ?? null);
    this.runs.limits = () => this.policy.agents;
    this.limits = new AgentLimits(() => this.policy.agents);
    this.approvals = new Approvals(engine.events);
    this.runner = new CallRunner(this.runs, this.approvals, audit, this.limits, new AutoSnapshots(engine, () => this.policy));
    this.access = new SandboxAccess(engine, audit, () => this.policy);
    const onSandbox: OnSandbox = (ctx, ref, tool, args, spec) => this.onSandbox(ctx, ref, tool, args, spec);
    const sandbox = (ctx: AgentContext, ref: string, tool: ToolName) => this.sandbox(ctx, ref, tool);
    this.snapshots = new SnapshotVerbs({
      engine,
      runs: this.runs,
      access: this.access,
      limits: this.limits,
      policy: () => this.policy,
      onSandbox,
      sandbox,
    });
    this.files = new FileVerbs(engine, () => this.policy, onSandbox, sandbox);
    this.lifecycleVerbs = new LifecycleVerbs({
      engine,
      policy: () => this.policy,
      onSandbox,
      forget: () => this.access.forget(),
      destroyed: (id) => this.runs.endForSandbox(id),
    });
    // Idle runs end even when no call comes to notice them.
    this.sweeper = setInterval(() => this.runs.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /** The policy in force: the home's file as it is now, when the gateway follows one. */
  get policy(): Policy {
    return this.policyFile.policy;
  }
  set policy(p: Policy) {
    this.policyFile.policy = p;
  }
  get policySource(): string {
    return this.policyFile.source;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.access.close();
    this.approvals.close();
    this.runs.close();
  }

  // ---- the agent verbs ----

  listSandboxes(ctx: AgentContext): Promise<SandboxInfo[]> {
    return this.access.list(ctx);
  }

  async inspectSandbox(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    const info = await this.sandbox(ctx, ref, 'sandbox.inspect');
    return this.engine.resolveSandbox(info.id);
  }

  async createSandbox(ctx: AgentContext, raw: unknown, hooks?: CallHooks): Promise<SandboxInfo> {
    const input = createInput(raw);
    const run = this.openRun(ctx, null, 'sandbox.create', boundArgs(input));
    // Counting the agent's sandboxes and creating one are one step per agent: parallel creates
    // cannot all see the same count (the user is not bound by create limits, so needs no lock).
    const create = async () => {
      const owned = ctx.trusted ? 0 : await this.access.countOwn(ctx.agent);
      let spec: SandboxSpec | null = null;
      return this.runner.call({
        ctx,
        run,
        sandboxId: null,
        tool: 'sandbox.create',
        args: boundArgs(input),
        policy: this.effective(null),
        hooks,
        verdict: () => {
          const decided = createVerdict(this.policy, this.engine.defaultImage, input, ctx, owned);
          spec = decided.spec;
          return decided.verdict;
        },
        body: async () => {
          const info = await this.engine['sandbox.create'](sandboxToCreate(this.policy, spec ?? parseSandboxSpec(input), ctx));
          if (run.sandboxId === null) this.runs.bind(run, { id: info.id, name: info.name }, this.effective(info).budgets);
          run.startSnapshot ??= null; // it made the sandbox: undoing the run is destroying it, there is nothing before to snapshot
          await this.engine.changes.atRunStart(run.id, info.id, true);
          return info;
        },
        settle: (call, info) => {
          call.args = { ...call.args, sandboxId: info.id, name: info.name };
          return true;
        },
      });
    };
    return ctx.trusted ? create() : this.limits.underCreateLock(ctx.agent, create);
  }

  destroySandbox(ctx: AgentContext, ref: string): Promise<{ id: string; name: string }> {
    return this.lifecycleVerbs.destroy(ctx, ref);
  }

  startSandbox(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    return this.lifecycleVerbs.start(ctx, ref);
  }

  stopSandbox(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    return this.lifecycleVerbs.stop(ctx, ref);
  }

  async exec(ctx: AgentContext, ref: string, body: ApiExecBody, handlers: ExecHandlers & CallHooks = {}): Promise<ExecCallResult> {
    let exec: ExecCall | null = null;
    const { value, run } = await this.onSandbox(ctx, ref, 'exec', { argv: argvOf(body.cmd) }, (info, run, policy) => {
      const x = (exec = new ExecCall(this.engine, this.limits, ctx, run, body, handlers));
      return {
        args: x.args,
        hooks: x.hooks,
        verdict: () => x.verdict(policy, this.policy.agents.outputBytesPerHour),
        // The decision goes in with exec.started: one transaction, durable before the command starts.
        writesDecision: true,
        body: (call, decision) => x.perform(info, call, decision!),
        settle: (call, r) => x.settle(call, r),
      };
    });
    return { ...pickExec(value), runId: run.id, callId: exec!.callId };
  }

  /** What changed in the sandbox's workspace since its create (for the agent only in a sandbox it may see). */
  async diffSandbox(ctx: AgentContext, ref: string): Promise<WorkspaceDiff> {
    return this.engine.changes.diff('sandbox', (await this.access.resolve(ctx, ref, 'sandbox.inspect')).id);
  }

  /** The run's changes since its first call there (the door checks who may see the run), recorded as `run.diffed` (diff-record.ts). */
  diffRun(runId: string, actor = 'user'): Promise<WorkspaceDiff> {
    return recordedDiff(this.audit, this.engine.changes, this.runs.detail(runId), actor);
  }

  // ---- runs and approvals (the gateway method map) ----

  async 'run.list'(p: GatewayMethodParams<'run.list'>): Promise<RunInfo[]> {
    return this.runs.list(p);
  }

  async 'run.get'(p: GatewayMethodParams<'run.get'>): Promise<RunDetail> {
    return this.runs.detail(p.id);
  }

  async 'run.diff'(p: GatewayMethodParams<'run.diff'>): Promise<WorkspaceDiff> {
    return this.diffRun(p.id);
  }

  async 'approval.list'(): Promise<ApprovalInfo[]> {
    return this.approvals.list();
  }

  async 'approval.decide'(p: GatewayMethodParams<'approval.decide'>): Promise<ApprovalInfo> {
    return this.approvals.decide(p.id, p.decision, p.by ?? 'user');
  }

  /** Follows a run: its current calls, then every change, until stop() or the run ends. */
  follow(runId: string, onCall: (call: ToolCallInfo) => void, onRun: (run: RunInfo) => void): () => void {
    return this.runs.follow(runId, onCall, onRun);
  }

  // ---- what the verbs share ----

  /** A verb on one sandbox: resolved (access and attestation checked), filed into its run, decided, then done. */
  private async onSandbox<T>(
    ctx: AgentContext,
    ref: string,
    tool: ToolName,
    runArgs: Record<string, unknown>,
    spec: (info: SandboxInfo, run: Run, policy: EffectivePolicy) => SandboxCall<T>,
  ): Promise<{ value: T; run: Run; info: SandboxInfo }> {
    const info = await this.sandbox(ctx, ref, tool);
    const run = this.openRun(ctx, info, tool, runArgs);
    // An agent run's changes count from before its first changing call (a person's CLI command, a run each time, takes no walk).
    if (!ctx.trusted && (tool === 'exec' || tool === 'file.write')) await this.engine.changes.atRunStart(run.id, info.id);
    const policy = this.effective(info);
    return { value: await this.runner.call({ ctx, run, sandboxId: info.id, tool, policy, ...spec(info, run, policy) }), run, info };
  }

  /** The sandbox, if the caller may act on it; a call into one that failed its attestation is refused (and recorded) here. */
  private async sandbox(ctx: AgentContext, ref: string, tool: ToolName): Promise<SandboxInfo> {
    const info = await this.access.resolve(ctx, ref, tool);
    const paused = pausedRefusal(tool, info);
    if (paused) throw paused;
    const unattested = attestationDenial(this.policy, tool, info, this.engine.attestations.latestFor(info.id));
    if (unattested) {
      // Recorded as a decision, in a run of its own like any refused call.
      const run = this.openRun(ctx, null, tool, { ref });
      await this.runner.call({
        ctx,
        run,
        sandboxId: info.id,
        tool,
        args: { ref },
        policy: effectivePolicy(this.policy, null),
        verdict: () => {
          throw unattested;
        },
        body: async () => undefined,
        settle: () => true,
      });
    }
    return info;
  }

  private effective(info: SandboxInfo | null): EffectivePolicy {
    return effectivePolicy(this.policy, info?.name ?? null, info ? madeBy(info) : 'agent');
  }

  /** The call's run; an agent at its most open runs is refused here, and that is recorded too. */
  private openRun(ctx: AgentContext, info: SandboxInfo | null, tool: ToolName, args: Record<string, unknown>): Run {
    try {
      return this.runs.open(ctx.agent, ctx.runKey, info ? { id: info.id, name: info.name } : null, () => this.effective(info).budgets, {
        unlimited: ctx.trusted === true,
      });
    } catch (err) {
      if (err instanceof GatewayDenial) this.runner.refuseUnfiled(ctx, tool, info?.id ?? null, args, err);
      throw err;
    }
  }
}
