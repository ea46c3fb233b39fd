// The gateway: every agent call passes here between a door (HTTP, MCP, CLI) and the engine. It knows
// the agent, files the call into a run, applies budgets, the breaker and policy (asking a person when
// policy says so), records each decision, and calls the engine under the agent's name.
import { createHash } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import type { GatewayMethodHandlers, GatewayMethodParams } from '../../../shared/contracts/methods.js';
import type { ApiExecBody, FileEntry, FileList, FileWritten } from '../../../shared/types/api.js';
import type { ExecResult } from '../../../shared/types/exec.js';
import { AGENT_FORBIDDEN_CREATE_FIELDS, type Policy } from '../../../shared/types/policy.js';
import type { ApprovalInfo, RunDetail, RunInfo, ToolCallInfo, ToolName } from '../../../shared/types/run.js';
import { SandboxSpecSchema, type SandboxInfo } from '../../../shared/types/sandbox.js';
import type { WardenEngine } from '../engine.js';
import { argvOf, type ExecHandlers } from '../podman/exec-session.js';
import { Approvals } from './approvals.js';
import type { ContextAuditSink } from './audit-context.js';
import { CallOutput } from './call-output.js';
import { CallRunner, boundArgs, type AgentContext, type CallHooks, type PolicyVerdict } from './call-runner.js';
import { decideCommand } from './command-policy.js';
import { GatewayDenial } from './denial.js';
import { listDirIn, readFileIn, writeFileIn } from './file-helper.js';
import { globToRegExp } from './glob.js';
import { effectivePolicy, type EffectivePolicy } from './policy-load.js';
import { RunStore, type Run } from './runs.js';
import { pathAccess, workspaceComponents, workspacePath } from './workspace-path.js';

export type { AgentContext } from './call-runner.js';

/** Label on sandboxes an agent created: with access "own", agents act only on their own. */
export const AGENT_LABEL = 'warden-gateway.agent';
const PREVIEW_BYTES = 512;
const RESOLVE_CACHE_MS = 2000;

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
    this.approvals = new Approvals(engine.events);
    this.runner = new CallRunner(this.runs, this.approvals, audit);
    this.stopEvents = engine.events.on('sandbox.event', (e) => {
      if (e.kind === 'remove') this.resolved.clear();
    });
  }

  close(): void {
    this.stopEvents();
    this.approvals.close();
  }

  // ---- sandboxes ----

  private async resolve(ctx: AgentContext, ref: string, tool: ToolName): Promise<SandboxInfo> {
    const hit = this.resolved.get(ref);
    let info: SandboxInfo;
    if (hit && hit.until > Date.now()) info = hit.info;
    else {
      info = await this.engine.podman.sandboxes.resolve(ref);
      this.resolved.set(ref, { info, until: Date.now() + RESOLVE_CACHE_MS });
      if (this.resolved.size > 1000) this.resolved.clear();
    }
    if (!this.mayAccess(ctx, info)) {
      // Recorded as a decision: the agent asked for a sandbox it may not touch.
      const run = this.runs.open(ctx.agent, ctx.runKey, null, () => this.policy.budgets);
      await this.runner
        .call({
          ctx,
          run,
          sandboxId: info.id,
          tool,
          args: { ref },
          policy: effectivePolicy(this.policy, null),
          verdict: () => {
            throw new GatewayDenial('policy', `sandbox ${ref} was not created by agent ${ctx.agent}`, 'agents act only on sandboxes they created (policy access: own)');
          },
          body: async () => undefined,
          settle: () => true,
        })
        ;
    }
    return info;
  }

  private mayAccess(ctx: AgentContext, info: SandboxInfo): boolean {
    return ctx.trusted === true || this.policy.access === 'all' || info.labels[AGENT_LABEL] === ctx.agent;
  }

  private effective(info: SandboxInfo | null): EffectivePolicy {
    return effectivePolicy(this.policy, info?.name ?? null);
  }

  private openRun(ctx: AgentContext, info: SandboxInfo | null): Run {
    return this.runs.open(ctx.agent, ctx.runKey, info ? { id: info.id, name: info.name } : null, () => this.effective(info).budgets);
  }

  async listSandboxes(ctx: AgentContext): Promise<SandboxInfo[]> {
    return (await this.engine['sandbox.list']()).filter((s) => this.mayAccess(ctx, s));
  }

  async inspectSandbox(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    const info = await this.resolve(ctx, ref, 'sandbox.inspect');
    return this.engine['sandbox.inspect']({ ref: info.id });
  }

  private createVerdict(ctx: AgentContext, raw: Record<string, unknown>): PolicyVerdict {
    const refuse = (message: string, hint?: string): never => {
      throw new GatewayDenial('create-limits', message, hint);
    };
    const forbidden = Object.keys(raw).filter((k) => (AGENT_FORBIDDEN_CREATE_FIELDS as readonly string[]).includes(k));
    if (forbidden.length) refuse(`agents may not ask for ${forbidden.join(', ')}: no host mounts, privileges, capabilities, devices or host namespaces`, 'leave these fields out; the sandbox gets a private /workspace');
    const parsed = SandboxSpecSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new WardenError('E_BAD_INPUT', `sandbox spec: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
    }
    const spec = parsed.data;
    const lim = this.policy.create;
    const image = spec.image;
    if (image && image !== this.engine.podman.sandboxes.defaultImage && !lim.images.some((g) => globToRegExp(g, false).test(image))) refuse(`image ${image} is not one agents may use (${lim.images.join(', ')})`);
    const network = spec.network ?? this.policy.network.default;
    if (!this.policy.network.allowed.includes(network)) refuse(`network ${network} is not allowed for agents (allowed: ${this.policy.network.allowed.join(', ')})`);
    if (spec.runtime && !lim.runtimes.includes(spec.runtime)) refuse(`runtime ${spec.runtime} is not allowed for agents`);
    if (spec.memory !== undefined && spec.memory > lim.maxMemoryBytes) refuse(`memory ${spec.memory} is over the ${lim.maxMemoryBytes} bytes agents may ask for`);
    if (spec.cpus !== undefined && spec.cpus > lim.maxCpus) refuse(`cpus ${spec.cpus} is over the ${lim.maxCpus} agents may ask for`);
    if (spec.pids !== undefined && spec.pids > lim.maxPids) refuse(`pids ${spec.pids} is over the ${lim.maxPids} agents may ask for`);
    if (spec.ttlSeconds !== undefined && spec.ttlSeconds > lim.maxTtlSeconds) refuse(`ttlSeconds ${spec.ttlSeconds} is over the ${lim.maxTtlSeconds} agents may ask for`);
    return { action: 'allow', source: 'create', reason: 'within the create limits', scope: 'sandbox.create', summary: `create sandbox ${spec.name ?? ''}`.trim() };
  }

  async createSandbox(ctx: AgentContext, raw: unknown, hooks?: CallHooks): Promise<SandboxInfo> {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new WardenError('E_BAD_INPUT', 'sandbox spec: expected a JSON object');
    const input = raw as Record<string, unknown>;
    const run = this.openRun(ctx, null);
    const mine = async () => (await this.engine['sandbox.list']()).filter((s) => s.labels[AGENT_LABEL] === ctx.agent).length;
    const count = await mine();
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
        const v = this.createVerdict(ctx, input);
        if (count >= this.policy.create.maxSandboxes) throw new GatewayDenial('create-limits', `agent ${ctx.agent} already has ${count} sandboxes, the most policy allows`, 'destroy one first');
        return v;
      },
      body: async () => {
        const parsed = SandboxSpecSchema.safeParse(input);
        if (!parsed.success) throw new WardenError('E_BAD_INPUT', `sandbox spec: ${parsed.error.issues[0]!.path.join('.') || '(top)'}: ${parsed.error.issues[0]!.message}`);
        const spec = parsed.data;
        const info = await this.engine['sandbox.create']({
          ...spec,
          network: spec.network ?? this.policy.network.default,
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
  }

  private async lifecycle(ctx: AgentContext, ref: string, tool: 'sandbox.destroy' | 'sandbox.start' | 'sandbox.stop'): Promise<SandboxInfo | { id: string; name: string }> {
    const info = await this.resolve(ctx, ref, tool);
    const run = this.openRun(ctx, info);
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
    const run = this.openRun(ctx, info);
    const policy = this.effective(info);
    const argv = argvOf(body.cmd);
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
        const remaining = budgets.outputBytes - run.outputBytes;
        if (remaining <= 0) throw new GatewayDenial('budget', `budget exceeded: the run has received its ${budgets.outputBytes} bytes of output`, 'start a new run, or raise budgets.outputBytes');
        if (ctx.trusted) return { action: 'allow', source: 'user', reason: 'the user is not bound by agent policy', scope: 'exec', summary: `exec ${argv.join(' ').slice(0, 300)}` };
        const d = decideCommand(policy.commands, argv, body.stdin, body.env);
        return { action: d.action, source: d.source, reason: d.reason, scope: `exec:${d.program ?? ''}`, summary: `exec ${argv.join(' ').slice(0, 300)}`, ...(d.action === 'deny' ? { denyReason: 'policy' as const } : {}) };
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
            outputLimitBytes: Math.max(1, budgets.outputBytes - run.outputBytes),
            ...(body.cwd !== undefined ? { cwd: body.cwd } : {}),
            ...(body.env !== undefined ? { env: body.env } : {}),
            ...(body.stdin !== undefined ? { stdin: body.stdin } : {}),
          },
          {
            onStdout: (c) => {
              keep(c);
              live.push('stdout', c);
              handlers.onStdout?.(c);
            },
            onStderr: (c) => {
              keep(c);
              live.push('stderr', c);
              handlers.onStderr?.(c);
            },
          },
          { before: [decision!.record], onRecorded: decision!.written },
        ).finally(() => live.end());
      },
      settle: (call, r) => {
        run.outputBytes += r.stdoutBytes + r.stderrBytes;
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

  private fileVerdict(ctx: AgentContext, policy: EffectivePolicy, path: string, write: boolean, op: string): PolicyVerdict {
    if (ctx.trusted) return { action: 'allow', source: 'user', reason: `${op} ${path}`, scope: `${op}:${path}`, summary: `${op} ${path}` };
    const access = pathAccess(policy.paths, path);
    if (access.access === 'hidden') throw new GatewayDenial('path', `${path} is hidden from agents by policy (${access.rule})`);
    if (write && access.access === 'read-only') throw new GatewayDenial('path', `${path} is read-only for agents by policy (${access.rule})`);
    return { action: 'allow', source: access.rule ?? 'paths', reason: `${op} ${path}`, scope: `${op}:${path}`, summary: `${op} ${path}` };
  }

  async readFile(ctx: AgentContext, ref: string, path: string, hooks?: CallHooks): Promise<Buffer> {
    let comps: string[] = [];
    let full = path;
    const info = await this.resolve(ctx, ref, 'file.read');
    const run = this.openRun(ctx, info);
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
        return this.fileVerdict(ctx, policy, full, false, 'read');
      },
      body: async (call) => {
        const data = await readFileIn(this.engine.podman.connection, info.id, comps, this.policy.files.maxReadBytes);
        this.audit.append({ actor: ctx.agent, sandboxId: info.id, kind: 'file.read', payload: { runId: run.id, callId: call.id, path: full, bytes: data.length, sha256: sha256(data) } });
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
    const run = this.openRun(ctx, info);
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
        return this.fileVerdict(ctx, policy, full, true, 'write');
      },
      body: async (call) => {
        const w = await writeFileIn(this.engine.podman.connection, info.id, comps, data);
        this.audit.append({ actor: ctx.agent, sandboxId: info.id, kind: 'file.written', payload: { runId: run.id, callId: call.id, path: full, bytes: w.bytes, sha256: w.sha256 } });
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
    const run = this.openRun(ctx, info);
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
        return this.fileVerdict(ctx, policy, full, false, 'list');
      },
      body: async (call) => {
        const all = await listDirIn(this.engine.podman.connection, info.id, comps);
        const entries: FileEntry[] = all.filter((e) => pathAccess(policy.paths, `${full}/${e.name}`).access !== 'hidden');
        this.audit.append({ actor: ctx.agent, sandboxId: info.id, kind: 'file.listed', payload: { runId: run.id, callId: call.id, path: full, entries: entries.length } });
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

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function pickExec(r: ExecResult): ExecResult {
  return { exitCode: r.exitCode, durationMs: r.durationMs, timedOut: r.timedOut, stdoutBytes: r.stdoutBytes, stderrBytes: r.stderrBytes, truncated: r.truncated, oomKilled: r.oomKilled };
}

