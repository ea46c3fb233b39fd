// The exec verb's part of a call: its arguments for the record (never stdin or env values, only
// their size, digest and names), the output budgets checked before policy, and the body that runs
// the command through the engine while the output goes to the agent (all of it), to the UIs (bounded,
// live) and to the call's preview. The decision is handed to the engine to write with exec.started.
import { createHash } from 'node:crypto';
import type { ApiExecBody } from '../../../shared/types/api.js';
import type { ExecRequest, ExecResult } from '../../../shared/types/exec.js';
import type { ToolCallInfo } from '../../../shared/types/run.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { DigestedExecResult, WardenEngine } from '../engine.js';
import { OutputPreview } from '../output-preview.js';
import { argvOf, type ExecHandlers } from '../podman/exec-session.js';
import { runOnlyAllowance, type AgentLimits } from './agent-limits.js';
import { commandSummary, execVerdict } from './approval-scope.js';
import { STREAMED_STDIN } from './command-expand.js';
import { CallOutputStream } from './call-output-stream.js';
import type { AgentContext, CallHooks, PendingDecision, PolicyVerdict } from './call-spec.js';
import { GatewayDenial } from './denial.js';
import type { EffectivePolicy } from './policy-load.js';
import type { Run } from './runs.js';

export class ExecCall {
  readonly argv: string[];
  readonly args: Record<string, unknown>;
  readonly hooks: CallHooks;
  private readonly timeoutMs: number;
  private readonly preview = new OutputPreview();
  callId = '';

  constructor(
    private readonly engine: WardenEngine,
    private readonly limits: AgentLimits,
    private readonly ctx: AgentContext,
    private readonly run: Run,
    private readonly body: ApiExecBody,
    private readonly handlers: ExecHandlers & CallHooks,
  ) {
    this.argv = argvOf(body.cmd);
    this.timeoutMs = Math.min(body.timeoutMs ?? run.budgets.execTimeoutMs, run.budgets.maxExecTimeoutMs);
    this.args = { argv: this.argv, cwd: body.cwd ?? null, timeoutMs: this.timeoutMs };
    if (body.env) this.args.envNames = Object.keys(body.env);
    if (body.stdin !== undefined) this.args.stdin = { bytes: Buffer.byteLength(body.stdin), sha256: sha256(body.stdin) };
    // Streamed input (E2B's stdin, a PTY's keys) is only known as it comes: the record says so.
    if (handlers.openInput) this.args.stdin = 'streamed';
    if (handlers.pty) this.args.pty = { ...handlers.pty };
    this.hooks = {
      onStart: (r, c) => {
        this.callId = c.id;
        handlers.onStart?.(r, c);
      },
      ...(handlers.onApproval ? { onApproval: handlers.onApproval } : {}),
      ...(handlers.onRunning ? { onRunning: handlers.onRunning } : {}),
    };
  }

  /** Output budgets first (the run's, then the agent's hourly one), then the command policy. */
  verdict(policy: EffectivePolicy, outputBytesPerHour: number): PolicyVerdict {
    const { ctx, run, argv, body } = this;
    const stdin = this.handlers.openInput ? STREAMED_STDIN : body.stdin;
    if (run.outputLeft() <= 0) throw GatewayDenial.runOutput(run.budgets.outputBytes);
    if (!ctx.trusted && this.limits.outputLeft(ctx.agent) <= 0) throw GatewayDenial.agentOutput(ctx.agent, outputBytesPerHour);
    if (ctx.trusted)
      return {
        action: 'allow',
        source: 'user',
        reason: 'the user is not bound by agent policy',
        scope: 'exec',
        summary: commandSummary(argv, stdin),
      };
    return execVerdict(policy.commands, argv, stdin, body.env);
  }

  /** Runs the command on the sandbox as resolved (access checked on it), not inspected a second time. */
  perform(info: SandboxInfo, call: ToolCallInfo, decision: PendingDecision): Promise<DigestedExecResult> {
    const { ctx, run, body, handlers } = this;
    // The UIs watch the output come in (bounded per call); the agent gets all of it from the handlers.
    const live = new CallOutputStream(this.engine.events, run.id, call.id);
    const stream = (name: 'stdout' | 'stderr', onChunk: ExecHandlers['onStdout']) => (c: Buffer) => {
      this.preview.add(c);
      live.push(name, c);
      // The door's answer is passed back: false pauses the command until the door drains.
      return onChunk?.(c);
    };
    const request: ExecRequest = {
      cmd: body.cmd,
      timeoutMs: this.timeoutMs,
      outputLimitBytes: Math.max(1, run.outputLeft()),
      ...(body.cwd !== undefined ? { cwd: body.cwd } : {}),
      ...(body.env !== undefined ? { env: body.env } : {}),
      ...(body.stdin !== undefined ? { stdin: body.stdin } : {}),
    };
    const execHandlers: ExecHandlers = {
      onStdout: stream('stdout', handlers.onStdout),
      onStderr: stream('stderr', handlers.onStderr),
      // Each chunk is charged to the run (and the agent) as it comes, so execs running side by
      // side share what is left and their total never exceeds the budget.
      allowance: ctx.trusted
        ? runOnlyAllowance(run)
        : this.limits.allowance(ctx.agent, { left: () => run.outputLeft(), charge: (n) => (run.outputBytes += n) }),
      ...(handlers.drain ? { drain: handlers.drain } : {}),
      ...(handlers.signal ? { signal: handlers.signal } : {}),
      ...(handlers.openInput ? { openInput: handlers.openInput } : {}),
      ...(handlers.pty ? { pty: handlers.pty } : {}),
    };
    return this.engine
      .execIn(info, request, execHandlers, { before: [decision.record], onRecorded: decision.written })
      .finally(() => live.end());
  }

  settle(call: ToolCallInfo, r: DigestedExecResult): boolean {
    call.exitCode = r.exitCode;
    call.digests = { stdout: r.stdoutDigest, stderr: r.stderrDigest };
    call.bytes = { stdout: r.stdoutBytes, stderr: r.stderrBytes };
    call.truncated = r.truncated;
    call.preview = this.preview.text();
    if (r.timedOut) call.error = { code: 'E_TIMEOUT', message: `timed out after ${this.timeoutMs} ms` };
    return r.exitCode === 0 && !r.timedOut;
  }
}

/** The result an agent gets: the exec's outcome, without digests (those are on the call and in the ledger). */
export function pickExec(r: ExecResult): ExecResult {
  return {
    exitCode: r.exitCode,
    durationMs: r.durationMs,
    timedOut: r.timedOut,
    stdoutBytes: r.stdoutBytes,
    stderrBytes: r.stderrBytes,
    truncated: r.truncated,
    oomKilled: r.oomKilled,
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(Buffer.from(text)).digest('hex');
}
