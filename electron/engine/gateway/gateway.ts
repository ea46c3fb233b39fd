// The gateway: every agent call passes here between a door (HTTP, MCP, CLI) and the engine. It knows
// the agent, files the call into a run, applies budgets, the breaker and policy (asking a person when
// policy says so), records each decision, and calls the engine under the agent's name.
import { createHash } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import type { GatewayMethodHandlers, GatewayMethodParams } from '../../../shared/contracts/methods.js';
import type { ApiExecBody, FileEntry, FileList, FileWritten } from '../../../shared/types/api.js';
import type { ExecResult } from '../../../shared/types/exec.js';
import type { Policy } from '../../../shared/types/policy.js';
import type { ApprovalInfo, RunDetail, RunInfo, ToolCallInfo, ToolName } from '../../../shared/types/run.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { WardenEngine } from '../engine.js';
import { argvOf, type ExecHandlers } from '../podman/exec-session.js';
import { AgentLimits, runOnlyAllowance } from './agent-limits.js';
import { Approvals } from './approvals.js';
import { attestationDenial } from './attestation-gate.js';
import type { ContextAuditSink } from './audit-context.js';
import { CallOutput } from './call-output.js';
import { CallRunner, boundArgs, type AgentContext, type CallHooks } from './call-runner.js';
import { createVerdict, parseSandboxSpec } from './create-limits.js';
import { commandSummary, execVerdict } from './approval-scope.js';
import { GatewayDenial } from './denial.js';
import { listDirIn, readFileIn, writeFileIn } from './file-helper.js';
import { effectivePolicy, type EffectivePolicy } from './policy-load.js';
import { RunStore, type Run } from './runs.js';
import { fileVerdict, pathAccess, workspaceComponents, workspacePath } from './workspace-path.js';

export type { AgentContext } from './call-runner.js';

/** Label on sandboxes an agent created: with access "own", agents act only on their own. */
export const AGENT_LABEL = 'warden-gateway.agent';
const PREVIEW_BYTES = 512;
const RESOLVE_CACHE_MS = 2000;
const SWEEP_MS = 60_000;

export interface ExecOutcome extends ExecResult {
  runId: string;
  callId: string;
}

export interface GatewayOptions {
  policy: Policy;
  policySource?: string;
}

export class Gateway implements GatewayMethodHandlers {
  readonly runs: RunStore;
  readonly approvals: Approvals;
  private readonly runner: CallRunner;
  private readonly resolved = new Map<string, { info: SandboxInfo; until: number }>();
  private readonly stopEvents: () => void;
  private readonly limits: AgentLimits;
  private readonly sweeper: NodeJS.Timeout;
  policy: Policy;
  readonly policySource: string | null;

  constructor(
    readonly engine: WardenEngine,
    private readonly audit: ContextAuditSink,
    options: GatewayOptions,
  ) {
    this.policy = options.policy;
    this.policySource = options.policySource ?? null;
    this.runs = new RunStore(engine.events);
    this.runs.limits = () => this.policy.agents;
    this.limits = new AgentLimits(() => this.policy.agents);
    this.approvals = new Approvals(engine.events);
    this.runner = new CallRunner(this.runs, this.approvals, audit, this.limits);
    this.stopEvents = engine.events.on('sandbox.event', (e) => {
      if (e.kind === 'remove') this.resolved.clear();
    });
    // Idle runs end even when no call comes to notice them.
    this.sweeper = setInterval(() => this.runs.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  close(): void {
    clearInterval(this.sweeper);
    this.stopEvents();
    this.approvals.close();
  }

  // ---- sandboxes ----

  private async resolve(ctx: AgentContext, ref: string, tool: ToolName): Promise<SandboxInfo> {
    const hit = this.resolved.get(ref);
    let info: SandboxInfo;
    if (hit && hit.until > Date.now()) info = hit.info;
    else {
      try {
        info = await this.engine.podman.sandboxes.resolve(ref);
      } catch (err) {
        // One answer for every sandbox an agent may not see, so its name says nothing.
        if (!ctx.trusted && err instanceof WardenError && err.code === 'E_NOT_FOUND') throw notFound(ref);
        throw err;
      }
      this.resolved.set(ref, { info, until: Date.now() + RESOLVE_CACHE_MS });
      if (this.resolved.size > 1000) this.resolved.clear();
    }
    if (!this.mayAccess(ctx, info)) {
      // Recorded as a decision (the agent asked for a sandbox it may not touch), but answered as a
      // missing one: a 403 would tell an agent which names other agents' sandboxes have.
      const reason = `sandbox ${ref} was not created by agent ${ctx.agent} (policy access: own)`;
      await this.audit
        .appendBatchAsync([{ actor: ctx.agent, sandboxId: info.id, kind: 'policy.denied', payload: { tool, args: { ref }, decision: { action: 'deny', source: 'access', reason, denyReason: 'policy' } } }])
        .catch((err: Error) => process.stderr.write(`warden: WARNING: the ledger did not take a policy.denied entry (${reason}): ${err.message}\n`));
      throw notFound(ref);
    }
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

  /** Legacy sandboxes (no home label: maybe another home's) are the user's only. */
  private mayAccess(ctx: AgentContext, info: SandboxInfo): boolean {
    return ctx.trusted === true || (!info.legacy && (this.policy.access === 'all' || info.labels[AGENT_LABEL] === ctx.agent));
  }

  private effective(info: SandboxInfo | null): EffectivePolicy {
    // Overrides loosen only for sandboxes the user made: an agent picks its sandboxes' names.
    return effectivePolicy(this.policy, info?.name ?? null, info && !info.legacy && info.labels[AGENT_LABEL] === undefined ? 'user' : 'agent');
  }

  /** The call's run; an agent at its most open runs is refused here, and that is recorded too. */
  private openRun(ctx: AgentContext, info: SandboxInfo | null, tool: ToolName, args: Record<string, unknown>): Run {
    try {
      return this.runs.open(ctx.agent, ctx.runKey, info ? { id: info.id, name: info.name } : null, () => this.effective(info).budgets, { unlimited: ctx.trusted === true });
    } catch (err) {
      if (err instanceof GatewayDenial) this.runner.refuseUnfiled(ctx, tool, info?.id ?? null, args, err);
      throw err;
    }
  }

  async listSandboxes(ctx: AgentContext): Promise<SandboxInfo[]> {
    return (await this.engine['sandbox.list']()).filter((s) => this.mayAccess(ctx, s));
  }

  async inspectSandbox(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    const info = await this.resolve(ctx, ref, 'sandbox.inspect');
    return this.engine['sandbox.inspect']({ ref: info.id });
  }

  async createSandbox(ctx: AgentContext, raw: unknown, hooks?: CallHooks): Promise<SandboxInfo> {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new WardenError('E_BAD_INPUT', 'sandbox spec: expected a JSON object');
    const input = raw as Record<string, unknown>;
    const run = this.openRun(ctx, null, 'sandbox.create', boundArgs(input));
    // Counting the agent's sandboxes and creating one are one step per agent: parallel creates
    // cannot all see the same count (the user is not bound by create limits, so needs no lock).
    const create = async () => {
      const count = ctx.trusted ? 0 : (await this.engine['sandbox.list']()).filter((s) => !s.legacy && s.labels[AGENT_LABEL] === ctx.agent).length;
      return this.runner.call({
        ctx,
        run,
        sandboxId: null,
        tool: 'sandbox.create',
        args: boundArgs(input),
        policy: this.effective(null),
        hooks,
        verdict: () => {
          if (ctx.trusted) return { action: 'allow', source: 'user', reason: 'the user is not bound by create limits', scope: 'sandbox.create', summary: 'create sandbox' };
          const v = createVerdict(this.policy, this.engine.podman.sandboxes.defaultImage, input);
          if (count >= this.policy.create.maxSandboxes) throw new GatewayDenial('create-limits', `agent ${ctx.agent} already has ${count} sandboxes, the most policy allows`, 'destroy one first');
          return v;
        },
        body: async () => {
          const spec = parseSandboxSpec(input);
          const info = await this.engine['sandbox.create']({
            ...spec,
            network: spec.network ?? this.policy.network.default,
            // A tier the policy requires applies to agents; the user picks freely.
            runtime: spec.runtime ?? (ctx.trusted ? undefined : this.policy.create.requireRuntime),
            labels: { ...spec.labels, [AGENT_LABEL]: ctx.agent },
          });
          if (run.sandboxId === null) this.runs.bind(run, { id: info.id, name: info.name }, this.effective(info).budgets);
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

  private async lifecycle(ctx: AgentContext, ref: string, tool: 'sandbox.destroy' | 'sandbox.start' | 'sandbox.stop'): Promise<SandboxInfo | { id: string; name: string }> {
    const info = await this.resolve(ctx, ref, tool);
    const run = this.openRun(ctx, info, tool, { ref });
    const result = await this.runner.call<SandboxInfo | { id: string; name: string }>({
      ctx,
      run,
      sandboxId: info.id,
      tool,
      args: { ref, sandboxId: info.id },
      policy: this.effective(info),
      verdict: () => ({ action: 'allow', source: 'lifecycle', reason: `${tool} of the agent's own sandbox`, scope: tool, summary: `${tool} ${info.name}` }),
      body: () => (tool === 'sandbox.destroy' ? this.engine['sandbox.destroy']({ ref: info.id }) : tool === 'sandbox.start' ? this.engine['sandbox.start']({ ref: info.id }) : this.engine['sandbox.stop']({ ref: info.id })),
      settle: () => true,
    });
    this.resolved.clear();
    if (tool === 'sandbox.destroy') this.runs.endForSandbox(info.id);
    return result;
  }

  destroySandbox(ctx: AgentContext, ref: string): Promise<{ id: string; name: string }> {
    return this.lifecycle(ctx, ref, 'sandbox.destroy');
  }

  startSandbox(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    return this.lifecycle(ctx, ref, 'sandbox.start') as Promise<SandboxInfo>;
  }

  stopSandbox(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    return this.lifecycle(ctx, ref, 'sandbox.stop') as Promise<SandboxInfo>;
  }

  // ---- exec ----

  async exec(ctx: AgentContext, ref: string, body: ApiExecBody, handlers: ExecHandlers & CallHooks = {}): Promise<ExecOutcome> {
    const info = await this.resolve(ctx, ref, 'exec');
    const argv = argvOf(body.cmd);
    const run = this.openRun(ctx, info, 'exec', { argv });
    const policy = this.effective(info);
    const budgets = run.budgets;
    const timeoutMs = Math.min(body.timeoutMs ?? budgets.execTimeoutMs, budgets.maxExecTimeoutMs);
    const args: Record<string, unknown> = { argv, cwd: body.cwd ?? null, timeoutMs };
    if (body.env) args.envNames = Object.keys(body.env);
    if (body.stdin !== undefined) args.stdin = { bytes: Buffer.byteLength(body.stdin), sha256: sha256(Buffer.from(body.stdin)) };
    const out: Buffer[] = [];
    let kept = 0;
    const keep = (c: Buffer) => {
      if (kept < PREVIEW_BYTES) {
        out.push(c);
        kept += c.length;
      }
    };
    let callId = '';
    const result = await this.runner.call({
      ctx,
      run,
      sandboxId: info.id,
      tool: 'exec',
      args,
      policy,
      hooks: {
        onStart: (r, c) => {
          callId = c.id;
          handlers.onStart?.(r, c);
        },
        ...(handlers.onApproval ? { onApproval: handlers.onApproval } : {}),
        ...(handlers.onRunning ? { onRunning: handlers.onRunning } : {}),
      },
      verdict: () => {
        if (run.outputLeft() <= 0) throw new GatewayDenial('budget', `budget exceeded: the run has received its ${budgets.outputBytes} bytes of output`, 'start a new run, or raise budgets.outputBytes');
        if (!ctx.trusted && this.limits.outputLeft(ctx.agent) <= 0) throw new GatewayDenial('budget', `limit: agent ${ctx.agent} has received its ${this.policy.agents.outputBytesPerHour} bytes of output of the last hour, whatever its runs`, 'wait, or raise agents.outputBytesPerHour in the policy');
        if (ctx.trusted) return { action: 'allow', source: 'user', reason: 'the user is not bound by agent policy', scope: 'exec', summary: commandSummary(argv, body.stdin) };
        return execVerdict(policy.commands, argv, body.stdin, body.env);
      },
      // The decision goes in with exec.started: one transaction, durable before the command starts.
      writesDecision: true,
      body: (call, decision) => {
        // The UIs watch the output come in (bounded per call); the agent gets all of it from the handlers.
        const live = new CallOutput(this.engine.events, run.id, call.id);
        // The sandbox as resolved above (access checked on it), not inspected a second time.
        return this.engine.execIn(
          info,
          {
            cmd: body.cmd,
            timeoutMs,
            outputLimitBytes: Math.max(1, run.outputLeft()),
            ...(body.cwd !== undefined ? { cwd: body.cwd } : {}),
            ...(body.env !== undefined ? { env: body.env } : {}),
            ...(body.stdin !== undefined ? { stdin: body.stdin } : {}),
          },
          {
            // The door's answer is passed back: false pauses the command until the door drains.
            onStdout: (c) => {
              keep(c);
              live.push('stdout', c);
              return handlers.onStdout?.(c);
            },
            onStderr: (c) => {
              keep(c);
              live.push('stderr', c);
              return handlers.onStderr?.(c);
            },
            // Each chunk is charged to the run (and the agent) as it comes, so execs running side by
            // side share what is left and their total never exceeds the budget.
            allowance: ctx.trusted ? runOnlyAllowance(run) : this.limits.allowance(ctx.agent, { left: () => run.outputLeft(), charge: (n) => (run.outputBytes += n) }),
            ...(handlers.drain ? { drain: handlers.drain } : {}),
            ...(handlers.signal ? { signal: handlers.signal } : {}),
          },
          { before: [decision!.record], onRecorded: decision!.written },
        ).finally(() => live.end());
      },
      settle: (call, r) => {
        call.exitCode = r.exitCode;
        call.digests = { stdout: r.stdoutDigest, stderr: r.stderrDigest };
        call.bytes = { stdout: r.stdoutBytes, stderr: r.stderrBytes };
        call.truncated = r.truncated;
        call.preview = Buffer.concat(out).subarray(0, PREVIEW_BYTES).toString('utf8');
        if (r.timedOut) call.error = { code: 'E_TIMEOUT', message: `timed out after ${timeoutMs} ms` };
        return r.exitCode === 0 && !r.timedOut;
      },
    });
    return { ...pickExec(result), runId: run.id, callId };
  }

  // ---- files ----

  async readFile(ctx: AgentContext, ref: string, path: string, hooks?: CallHooks): Promise<Buffer> {
    let comps: string[] = [];
    let full = path;
    const info = await this.resolve(ctx, ref, 'file.read');
    const run = this.openRun(ctx, info, 'file.read', { path });
    const policy = this.effective(info);
    return this.runner.call({
      ctx,
      run,
      sandboxId: info.id,
      tool: 'file.read',
      args: { path },
      policy,
      hooks,
      verdict: () => {
        comps = workspaceComponents(path);
        full = workspacePath(comps);
        return fileVerdict(ctx, policy, full, false, 'read');
      },
      body: async (call) => {
        const data = await readFileIn(this.engine.podman.connection, info.id, comps, this.policy.files.maxReadBytes);
        await this.audit.appendBatchAsync([{ actor: ctx.agent, sandboxId: info.id, kind: 'file.read', payload: { runId: run.id, callId: call.id, path: full, bytes: data.length, sha256: sha256(data) } }]);
        return data;
      },
      settle: (call, data) => {
        call.digests = { content: sha256(data) };
        call.bytes = { content: data.length };
        return true;
      },
    });
  }

  async writeFile(ctx: AgentContext, ref: string, path: string, data: Buffer, hooks?: CallHooks): Promise<FileWritten> {
    let comps: string[] = [];
    let full = path;
    if (data.length > this.policy.files.maxWriteBytes) throw new WardenError('E_TOO_LARGE', `the file is ${data.length} bytes, more than the ${this.policy.files.maxWriteBytes} the file API writes`);
    const info = await this.resolve(ctx, ref, 'file.write');
    const run = this.openRun(ctx, info, 'file.write', { path, bytes: data.length });
    const policy = this.effective(info);
    const digest = sha256(data);
    return this.runner.call({
      ctx,
      run,
      sandboxId: info.id,
      tool: 'file.write',
      args: { path, bytes: data.length, sha256: digest },
      policy,
      hooks,
      verdict: () => {
        comps = workspaceComponents(path);
        full = workspacePath(comps);
        if (comps.length === 0) throw new WardenError('E_BAD_INPUT', '/workspace is a directory; name a file in it');
        return fileVerdict(ctx, policy, full, true, 'write');
      },
      body: async (call) => {
        const w = await writeFileIn(this.engine.podman.connection, info.id, comps, data);
        await this.audit.appendBatchAsync([{ actor: ctx.agent, sandboxId: info.id, kind: 'file.written', payload: { runId: run.id, callId: call.id, path: full, bytes: w.bytes, sha256: w.sha256 } }]);
        return { path: full, bytes: w.bytes, sha256: w.sha256 };
      },
      settle: (call, w) => {
        call.digests = { content: w.sha256 };
        call.bytes = { content: w.bytes };
        return true;
      },
    });
  }

  async listFiles(ctx: AgentContext, ref: string, path = '/workspace', hooks?: CallHooks): Promise<FileList> {
    let comps: string[] = [];
    let full = path;
    const info = await this.resolve(ctx, ref, 'file.list');
    const run = this.openRun(ctx, info, 'file.list', { path });
    const policy = this.effective(info);
    return this.runner.call({
      ctx,
      run,
      sandboxId: info.id,
      tool: 'file.list',
      args: { path },
      policy,
      hooks,
      verdict: () => {
        comps = workspaceComponents(path);
        full = workspacePath(comps);
        return fileVerdict(ctx, policy, full, false, 'list');
      },
      body: async (call) => {
        const all = await listDirIn(this.engine.podman.connection, info.id, comps);
        const entries: FileEntry[] = all.filter((e) => pathAccess(policy.paths, `${full}/${e.name}`).access !== 'hidden');
        await this.audit.appendBatchAsync([{ actor: ctx.agent, sandboxId: info.id, kind: 'file.listed', payload: { runId: run.id, callId: call.id, path: full, entries: entries.length } }]);
        return { path: full, entries };
      },
      settle: (call, list) => {
        call.bytes = { entries: list.entries.length };
        return true;
      },
    });
  }

  // ---- runs and approvals (the gateway method map) ----

  async 'run.list'(p: GatewayMethodParams<'run.list'>): Promise<RunInfo[]> {
    return this.runs.list(p);
  }

  async 'run.get'(p: GatewayMethodParams<'run.get'>): Promise<RunDetail> {
    return this.runs.detail(p.id);
  }

  async 'approval.list'(): Promise<ApprovalInfo[]> {
    return this.approvals.list();
  }

  async 'approval.decide'(p: GatewayMethodParams<'approval.decide'>): Promise<ApprovalInfo> {
    return this.approvals.decide(p.id, p.decision, p.by ?? 'user');
  }

  /** Follows a run: its current calls, then every change, until stop() or the run ends. */
  follow(runId: string, onCall: (call: ToolCallInfo) => void, onRun: (run: RunInfo) => void): () => void {
    const stops = [this.engine.events.on('run.call', (c) => c.runId === runId && onCall(c)), this.engine.events.on('run.updated', (r) => r.id === runId && onRun(r))];
    return () => stops.forEach((s) => s());
  }
}

/** What an agent hears about a sandbox that is missing, not Warden's, or another agent's: the same. */
function notFound(ref: string): WardenError {
  return new WardenError('E_NOT_FOUND', `no sandbox named ${ref}`, 'list your sandboxes with GET /v1/sandboxes');
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function pickExec(r: ExecResult): ExecResult {
  return { exitCode: r.exitCode, durationMs: r.durationMs, timedOut: r.timedOut, stdoutBytes: r.stdoutBytes, stderrBytes: r.stderrBytes, truncated: r.truncated, oomKilled: r.oomKilled };
}

