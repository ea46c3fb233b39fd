import { z } from 'zod';
import type { ApprovalEffect } from './approval-effect.js';
import type { Budgets, PolicyAction } from './policy.js';

// Runs and tool calls: what agents did, in order, with each decision and result. Pushed live to the UI.

export const TOOL_NAMES = [
  'sandbox.create',
  'sandbox.destroy',
  'sandbox.start',
  'sandbox.stop',
  'sandbox.inspect',
  'exec',
  'file.read',
  'file.write',
  'file.list',
  // Snapshots (engine/snapshot/): take, remove, reset to one, fork a new sandbox from one.
  'sandbox.snapshot',
  'snapshot.remove',
  'sandbox.reset',
  'sandbox.fork',
  'file.mkdir',
  'file.remove',
  'file.move',
  // After create (gateway/lifecycle-verbs.ts): a new TTL, pause, resume.
  'sandbox.ttl',
  'sandbox.pause',
  'sandbox.resume',
  /** Not an agent verb: a connection from an `egress` sandbox that a rule asks about (its approval's tool). */
  'net.connect',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** interrupted: it was active when Warden stopped (or died); nothing can continue it. */
export const RUN_STATUSES = ['active', 'finished', 'expired', 'interrupted'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const CALL_STATUSES = ['pending', 'awaiting-approval', 'running', 'ok', 'failed', 'denied'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/** Why a call was stopped before it ran. */
export type DenyReason =
  | 'policy'
  | 'approval-denied'
  | 'approval-timeout'
  | 'budget'
  | 'breaker'
  | 'create-limits'
  | 'path'
  /** Policy asked for a snapshot before the call, and it could not be taken: the call did not run unprotected. */
  | 'snapshot-failed';

/** An automatic snapshot policy asked for: `run-start` (snapshots.onRunStart) or `command` (a snapshot-then-allow rule). */
export interface CallSnapshot {
  /** The sandbox's name and the snapshot's tag: `warden sandbox reset NAME --to TAG` goes back to it. */
  sandbox: string;
  tag: string;
  reason: 'run-start' | 'command';
}

export interface CallDecision {
  action: PolicyAction;
  /** What decided: the rule text, "default", "dynamic", a budget name, "breaker" … */
  source: string;
  reason: string;
  denyReason?: DenyReason;
  /** For an `ask`: the approval, who decided and when. */
  approval?: { id: string; decision: ApprovalDecision | 'timeout'; by: string | null; at: string };
  /** The snapshot taken before the call ran, when policy asked for one. */
  snapshot?: CallSnapshot;
}

/** A connection an exec's programs made through the egress proxy (network mode `egress`), as its timeline shows it. */
export interface CallConnection {
  connId: string;
  host: string;
  port: number;
  decision: 'allow' | 'deny';
  /** What decided (the rule, the default, the guard, a person). */
  rule: string;
  bytesOut: number;
  bytesIn: number;
  /** Still carrying bytes (an allowed one not yet closed). */
  open: boolean;
}

export interface ToolCallInfo {
  id: string;
  runId: string;
  /** 1-based position in the run. */
  index: number;
  tool: ToolName;
  /** Arguments as given (file contents and stdin are replaced by their digest and size). */
  args: Record<string, unknown>;
  status: CallStatus;
  decision: CallDecision | null;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
  exitCode: number | null;
  error: { code: string; message: string } | null;
  /** SHA-256 hex of stdout/stderr (exec) or of the file's bytes (read/write). */
  digests: Record<string, string>;
  bytes: Record<string, number>;
  /** At most 512 bytes of output, as text. */
  preview: string | null;
  truncated: boolean;
  /** Ledger entries written for this call, in order (empty until the ledger reports them). */
  ledgerSeqs: number[];
  /** Connections its programs made through the egress proxy (the first MAX_CALL_CONNECTIONS), if any. */
  connections?: CallConnection[];
}

/** Connections a call's timeline keeps (the ledger keeps them all). */
export const MAX_CALL_CONNECTIONS = 200;

/** A call as it is when it is made: pending, undecided, nothing recorded yet. */
export function pendingCall(fields: Pick<ToolCallInfo, 'id' | 'runId' | 'index' | 'tool' | 'args' | 'startedAt'>): ToolCallInfo {
  return {
    ...fields,
    status: 'pending',
    decision: null,
    endedAt: null,
    durationMs: null,
    exitCode: null,
    error: null,
    digests: {},
    bytes: {},
    preview: null,
    truncated: false,
    ledgerSeqs: [],
  };
}

export interface BreakerInfo {
  state: 'closed' | 'open' | 'half-open';
  consecutiveFailures: number;
  openedAt: string | null;
}

export interface RunInfo {
  id: string;
  agent: string;
  /** The client's own key (X-Warden-Run), if it gave one. */
  key: string | null;
  sandboxId: string | null;
  sandboxName: string | null;
  status: RunStatus;
  startedAt: string;
  endedAt: string | null;
  calls: number;
  failures: number;
  outputBytes: number;
  breaker: BreakerInfo;
  /** The budgets this run is held to (for the UI's gauges). */
  budgets: Budgets;
  /**
   * The snapshot taken before its first changing call (policy `snapshots.onRunStart`): "undo this run"
   * is a reset of that sandbox to that tag. Absent: none was taken (off, the run created its sandbox, or
   * it has changed nothing yet).
   */
  startSnapshot?: CallSnapshot;
}

export interface RunDetail extends RunInfo {
  toolCalls: ToolCallInfo[];
}

export const APPROVAL_DECISIONS = ['approve-once', 'approve-run', 'deny'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export interface ApprovalInfo {
  id: string;
  runId: string;
  callId: string;
  agent: string;
  sandboxId: string | null;
  tool: ToolName;
  /** What is asked, for a person: the whole command line (and its stdin) or the path, never cut. */
  summary: string;
  /** Each program of the command that needs this approval, with the rule that asks: what it covers. */
  programs: string[];
  reason: string;
  /** What the call would change (a file write's diff), computed when the ask was raised; its sha256 is in the decision's entry. */
  effect?: ApprovalEffect;
  requestedAt: string;
  deadline: string;
  status: 'pending' | 'approved' | 'denied' | 'timeout';
  decidedBy: string | null;
  decidedAt: string | null;
  decision: ApprovalDecision | null;
}

export const ApprovalDecideSchema = z
  .object({
    id: z.string().min(1).max(64),
    decision: z.enum(APPROVAL_DECISIONS),
    /** Who decides, for the record (the door fills in the authenticated user when it can). */
    by: z.string().min(1).max(128).optional(),
  })
  .strict();
export type ApprovalDecide = z.infer<typeof ApprovalDecideSchema>;

export const RunQuerySchema = z
  .object({
    agent: z.string().max(128).optional(),
    sandbox: z.string().max(128).optional(),
    status: z.enum(RUN_STATUSES).optional(),
    /** Runs started at or after this time (ISO 8601). */
    since: z.string().datetime({ offset: true }).optional(),
    /** A page: runs started before this run (its id), newest `limit` of them. */
    before: z.string().max(64).optional(),
    limit: z.number().int().min(1).max(10_000).optional(),
  })
  .strict();
export type RunQuery = z.infer<typeof RunQuerySchema>;
