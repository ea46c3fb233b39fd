// What a tool call is made of, as a gateway verb hands it to the CallRunner: who asks, the policy's
// verdict, the body that reaches the engine and how its result fills the call, and how its
// arguments are kept on the record (bounded, so an agent cannot grow the ledger with one call).
import { createHash } from 'node:crypto';
import type { ApprovalEffect } from '../../../shared/types/approval-effect.js';
import type { PolicyAction } from '../../../shared/types/policy.js';
import type { DenyReason, ToolCallInfo, ToolName } from '../../../shared/types/run.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { AuditRecord } from '../audit-sink.js';
import type { EffectivePolicy } from './policy-load.js';
import type { Run } from './runs.js';

export interface AgentContext {
  agent: string;
  /** The user (not an agent): policy, create limits and the own-sandbox rule do not apply; budgets and the record do. */
  trusted?: boolean;
  /** The client's run key (X-Warden-Run), if any. */
  runKey: string | null;
}

export interface PolicyVerdict {
  action: PolicyAction;
  source: string;
  reason: string;
  denyReason?: DenyReason;
  /** What "approve for this run" covers (e.g. "sandbox.create"); see scopes. */
  scope: string;
  /**
   * For an ask that covers several things (each program of a command that needs approval): all of
   * them. An approval for the run covers exactly these; a later call is let through unasked only
   * when every one of its own scopes was approved.
   */
  scopes?: string[];
  /** For the approval prompt: the whole command (or path), and each program that needs the approval. */
  summary: string;
  programs?: string[];
  /** For an ask: what the call would change (a write's diff), computed before the person is asked and shown to them. */
  effect?: () => Promise<ApprovalEffect>;
  /** A snapshot-then-allow rule matched: the sandbox is snapshotted before the call runs (or the call is refused). */
  snapshot?: boolean;
}

export interface CallHooks {
  onStart?: (run: Run, call: ToolCallInfo) => void;
  onApproval?: (approval: { id: string; deadline: string; reason: string }) => void;
  /** The call was allowed and is about to reach the engine. */
  onRunning?: (call: ToolCallInfo) => void;
}

/** The allowed decision, for a body that writes it with its own first entry. */
export interface PendingDecision {
  record: AuditRecord;
  /** Called by the body once the record is durable, before the call's effect. */
  written: () => void;
}

export interface CallSpec<T> {
  ctx: AgentContext;
  run: Run;
  sandboxId: string | null;
  tool: ToolName;
  args: Record<string, unknown>;
  policy: EffectivePolicy;
  verdict: () => PolicyVerdict;
  /**
   * With writesDecision, the body gets the allowed decision's entry and must write it in the same
   * transaction as its own first entry, before any effect, and then call written() (exec: with
   * exec.started, one fsync instead of two). Otherwise (null) the runner writes it before the body.
   */
  body: (call: ToolCallInfo, decision: PendingDecision | null) => Promise<T>;
  writesDecision?: boolean;
  /** Fills the call's result from the body's value; returns whether it counts as a success. */
  settle: (call: ToolCallInfo, value: T) => boolean;
  hooks?: CallHooks;
}

const MAX_ARGS_JSON = 8 * 1024;

/** Arguments for the record: kept whole when small, else a digest, the keys and a preview. */
export function boundArgs(args: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(args) ?? '';
  // JSON.stringify writes a lone surrogate as an escape; the ledger refuses such strings.
  const loneSurrogate = /\\ud[89a-f][0-9a-f]{2}/i.test(text);
  if (text.length <= MAX_ARGS_JSON && !loneSurrogate) return args;
  return {
    truncated: true,
    sha256: createHash('sha256').update(text).digest('hex'),
    bytes: Buffer.byteLength(text),
    keys: Object.keys(args),
    preview: text.slice(0, 1024),
  };
}

/** A call's spec less what every verb on a resolved sandbox shares (the gateway fills those in). */
export type SandboxCall<T> = Omit<CallSpec<T>, 'ctx' | 'run' | 'sandboxId' | 'tool' | 'policy'>;

/** The gateway's one pipeline for a verb on one sandbox (access, run, policy, then the body), as verb groups outside gateway.ts call it. */
export type OnSandbox = <T>(
  ctx: AgentContext,
  ref: string,
  tool: ToolName,
  runArgs: Record<string, unknown>,
  spec: (info: SandboxInfo, run: Run, policy: EffectivePolicy) => SandboxCall<T>,
) => Promise<{ value: T; run: Run; info: SandboxInfo }>;
