// The one typed method map every UI door speaks (IPC, the web shell's WebSocket; the CLI in-process
// uses its engine methods). Each method has a zod schema for its request, checked at the door, a
// response type, and the target that answers it: the engine, the connection's own session
// (terminals, stats), the gateway (runs and approvals), the person's review of a sandbox (its diff
// and snapshots, through the gateway as that person) or the ledger view. Handlers and clients are
// typed from this map, never by hand.
import { z } from 'zod';
import { answer } from './answer.js';
import type { ConnectionInfo, DoctorReport } from '../types/engine.js';
import { SandboxRefSchema, SandboxSpecSchema, type SandboxInfo } from '../types/sandbox.js';
import type { PoolStatus } from '../types/pool.js';
import { ExecRequestSchema, TerminalSizeSchema, type ExecResult } from '../types/exec.js';
import { AttestRequestSchema, type Attestation } from '../types/attestation.js';
import type { WorkspaceDiff } from '../types/diff.js';
import { ForkRequestSchema, ResetRequestSchema, SnapshotTagSchema, type SnapshotInfo } from '../types/snapshot.js';
import { ApprovalDecideSchema, RunQuerySchema, type ApprovalInfo, type RunDetail, type RunInfo } from '../types/run.js';
import {
  LedgerBrowseSchema,
  LedgerExportRequestSchema,
  LedgerVerifyRequestSchema,
  type LedgerExportResult,
  type LedgerEntriesPage,
  type LedgerSummary,
  type LedgerVerifyOutcome,
} from '../types/ledger.js';
import { LedgerProofRequestSchema, type LedgerProof } from '../types/ledger-proof.js';
import { StatsHistoryRequestSchema, TimelineEntriesRequestSchema, type StatsHistory, type TimelineEntriesPage } from '../types/timeline.js';

const RefRequest = z.object({ ref: SandboxRefSchema }).strict();
const Empty = z.object({}).strict();
const StreamId = z.string().min(1).max(64);

/** A buffered exec's answer over a UI door: output as base64, so binary output survives JSON. */
export interface ExecRunResponse extends ExecResult {
  /** Capped by request.outputLimitBytes. */
  stdoutBase64: string;
  stderrBase64: string;
}

/**
 * Who answers a method: the engine; the connection's session (streams a UI holds open live per
 * connection in the door, their output coming back as events); the gateway; the person's review of a
 * sandbox (gateway verbs called as the window's person, so they are filed and recorded like the CLI's);
 * the ledger view.
 */
export type MethodTarget = 'engine' | 'session' | 'gateway' | 'review' | 'ledger';

export const UiMethods = {
  'engine.info': { target: 'engine', params: Empty, response: answer<ConnectionInfo>() },
  'engine.doctor': { target: 'engine', params: z.object({ fresh: z.boolean().optional() }).strict(), response: answer<DoctorReport>() },
  'sandbox.list': { target: 'engine', params: Empty, response: answer<SandboxInfo[]>() },
  'sandbox.inspect': { target: 'engine', params: RefRequest, response: answer<SandboxInfo>() },
  'sandbox.create': { target: 'engine', params: SandboxSpecSchema, response: answer<SandboxInfo>() },
  'sandbox.start': { target: 'engine', params: RefRequest, response: answer<SandboxInfo>() },
  'sandbox.stop': { target: 'engine', params: RefRequest, response: answer<SandboxInfo>() },
  'sandbox.restart': { target: 'engine', params: RefRequest, response: answer<SandboxInfo>() },
  'sandbox.pause': { target: 'engine', params: RefRequest, response: answer<SandboxInfo>() },
  'sandbox.resume': { target: 'engine', params: RefRequest, response: answer<SandboxInfo>() },
  'sandbox.destroy': { target: 'engine', params: RefRequest, response: answer<{ id: string; name: string }>() },
  'exec.run': {
    target: 'engine',
    params: z.object({ ref: SandboxRefSchema, request: ExecRequestSchema }).strict(),
    response: answer<ExecRunResponse>(),
  },
  /** Checks from inside that each promise holds; recorded as sandbox.attested. */
  'sandbox.attest': { target: 'engine', params: AttestRequestSchema, response: answer<Attestation>() },
  /** The sandbox's latest attestation in this process, or null. */
  'sandbox.attestation': { target: 'engine', params: RefRequest, response: answer<Attestation | null>() },
  /** The warm pool: ready sandboxes per shape (they are never in sandbox.list until claimed). */
  'pool.status': { target: 'engine', params: Empty, response: answer<PoolStatus>() },

  'terminal.open': {
    target: 'session',
    params: z.object({ ref: SandboxRefSchema, size: TerminalSizeSchema }).strict(),
    response: answer<{ id: string; sandboxId: string }>(),
  },
  /** Keystrokes and pastes; a paste of a few hundred KiB is one call. */
  'terminal.input': {
    target: 'session',
    params: z.object({ id: StreamId, data: z.string().max(1024 * 1024) }).strict(),
    response: answer<null>(),
  },
  'terminal.resize': { target: 'session', params: z.object({ id: StreamId, size: TerminalSizeSchema }).strict(), response: answer<null>() },
  'terminal.close': { target: 'session', params: z.object({ id: StreamId }).strict(), response: answer<null>() },
  /** The sandboxes whose stats this connection wants (replaces the previous set; [] stops them all). */
  'stats.watch': {
    target: 'session',
    params: z.object({ ids: z.array(SandboxRefSchema).max(1000) }).strict(),
    response: answer<{ watching: number }>(),
  },

  'run.list': { target: 'gateway', params: RunQuerySchema, response: answer<RunInfo[]>() },
  'run.get': { target: 'gateway', params: z.object({ id: z.string().min(1).max(64) }).strict(), response: answer<RunDetail>() },
  /** What the run changed in its sandbox's /workspace (the Changes tab): texts from a sandbox, shown as text only. */
  'run.diff': { target: 'gateway', params: z.object({ id: z.string().min(1).max(64) }).strict(), response: answer<WorkspaceDiff>() },
  'approval.list': { target: 'gateway', params: Empty, response: answer<ApprovalInfo[]>() },
  'approval.decide': { target: 'gateway', params: ApprovalDecideSchema, response: answer<ApprovalInfo>() },

  /** The sandbox's whole /workspace diff since its create, reset or fork (the detail view's Changes tab). */
  'sandbox.diff': { target: 'review', params: RefRequest, response: answer<WorkspaceDiff>() },
  'snapshot.list': { target: 'review', params: RefRequest, response: answer<SnapshotInfo[]>() },
  'snapshot.take': {
    target: 'review',
    params: z.object({ ref: SandboxRefSchema, tag: SnapshotTagSchema.optional() }).strict(),
    response: answer<SnapshotInfo>(),
  },
  'snapshot.remove': {
    target: 'review',
    params: z.object({ ref: SandboxRefSchema, tag: SnapshotTagSchema }).strict(),
    response: answer<SnapshotInfo>(),
  },
  /** Back to a snapshot under the same name (a new container id); what was done since is lost. */
  'snapshot.reset': { target: 'review', params: ResetRequestSchema.extend({ ref: SandboxRefSchema }), response: answer<SandboxInfo>() },
  /** A new sandbox from a snapshot, beside the original. */
  'snapshot.fork': { target: 'review', params: ForkRequestSchema.extend({ ref: SandboxRefSchema }), response: answer<SandboxInfo>() },

  'ledger.summary': { target: 'ledger', params: Empty, response: answer<LedgerSummary>() },
  'ledger.entries': { target: 'ledger', params: LedgerBrowseSchema, response: answer<LedgerEntriesPage>() },
  /** Runs a full verification; `ledger.verify.progress` events carry its jobId meanwhile. */
  'ledger.verify': { target: 'ledger', params: LedgerVerifyRequestSchema, response: answer<LedgerVerifyOutcome>() },
  'ledger.export': { target: 'ledger', params: LedgerExportRequestSchema, response: answer<LedgerExportResult>() },
  /** An entry with its audit path against the latest signed checkpoint, for the page to check itself. */
  'ledger.proof': { target: 'ledger', params: LedgerProofRequestSchema, response: answer<LedgerProof>() },
  /** Signs a checkpoint of the whole ledger now (what `warden audit checkpoint` does). */
  'ledger.checkpoint': { target: 'ledger', params: Empty, response: answer<{ size: number; time: string }>() },

  /** A sandbox's resource history in a time range (kept by the door for its whole life, downsampled). */
  'stats.history': { target: 'session', params: StatsHistoryRequestSchema, response: answer<StatsHistory>() },
  /** A sandbox's ledger entries in a time window, compact, oldest first (the timeline's engine, network and snapshot items). */
  'timeline.entries': { target: 'ledger', params: TimelineEntriesRequestSchema, response: answer<TimelineEntriesPage>() },
} as const satisfies Record<string, { target: MethodTarget; params: z.ZodType; response: unknown }>;

export type UiMethodName = keyof typeof UiMethods;
/** What a client sends (before parsing: sizes may be text). */
export type UiMethodRequest<M extends UiMethodName> = z.input<(typeof UiMethods)[M]['params']>;
/** What a handler receives (after parsing). */
export type UiMethodParams<M extends UiMethodName> = z.output<(typeof UiMethods)[M]['params']>;
export type UiMethodResponse<M extends UiMethodName> = (typeof UiMethods)[M]['response'];

/** The methods one target answers. */
export type MethodsOf<T extends MethodTarget> = {
  [M in UiMethodName]: (typeof UiMethods)[M]['target'] extends T ? M : never;
}[UiMethodName];
/** What a target implements: one async handler per method. */
export type HandlersOf<T extends MethodTarget> = { [M in MethodsOf<T>]: (params: UiMethodParams<M>) => Promise<UiMethodResponse<M>> };

/** The engine's methods (WardenEngine implements them; the CLI parses their requests in-process). */
export type MethodName = MethodsOf<'engine'>;
export type MethodParams<M extends MethodName> = UiMethodParams<M>;
export type MethodHandlers = HandlersOf<'engine'>;
export type GatewayMethodParams<M extends MethodsOf<'gateway'>> = UiMethodParams<M>;
export type GatewayMethodHandlers = HandlersOf<'gateway'>;
export type LedgerMethodParams<M extends MethodsOf<'ledger'>> = UiMethodParams<M>;

/** IPC channels between the Electron preload and main. */
export const IPC_CHANNELS = { invoke: 'warden:invoke', event: 'warden:event', ready: 'warden:ready' } as const;
