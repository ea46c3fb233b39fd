// Events pushed from the engine to every subscriber (UI, followers). One map, typed payloads.
import type { ConnectionStatus, EngineEvent } from '../types/engine.js';
import type { StatsSample } from '../types/stats.js';
import type { ApprovalInfo, RunInfo, ToolCallInfo } from '../types/run.js';
import type { LedgerEntry } from '../types/ledger.js';
import type { Attestation } from '../types/attestation.js';

export interface EventMap {
  'engine.status': { status: ConnectionStatus };
  'sandbox.event': EngineEvent;
  /** The engine stream was re-opened after a gap: take a fresh snapshot. */
  'sandbox.resync': Record<string, never>;
  'stats.sample': StatsSample;
  /** An attestation landed (the automatic one after start, or one asked for). */
  'sandbox.attested': Attestation;
  /** A run was opened or changed (status, counters, breaker). */
  'run.updated': RunInfo;
  /** A tool call was added or changed (decision, status, result, ledger seqs). */
  'run.call': ToolCallInfo;
  /** Output of a running exec call as it comes (batched, UTF-8 text, the first RUN_OUTPUT_STREAM_BYTES of a call). */
  'run.output': { runId: string; callId: string; stream: 'stdout' | 'stderr'; data: string };
  /** An `ask` is waiting for a person. */
  'approval.requested': ApprovalInfo;
  /** An approval was decided, or timed out. */
  'approval.decided': ApprovalInfo;
  /** An entry this process appended (the ledger view follows the head). */
  'ledger.appended': LedgerEntry;
  /** Progress of a `ledger.verify` job: entries checked so far of total. */
  'ledger.verify.progress': { jobId: string; done: number; total: number };
  /** Terminal output for a UI connection, batched (a few ms) and decoded as UTF-8. */
  'terminal.data': { id: string; data: string };
  'terminal.exit': { id: string; code: number | null };
}

/**
 * Bytes of one exec call's output (stdout and stderr together) pushed as 'run.output'; the rest is
 * not streamed to UIs (the call's byte counts, digests and preview say what there was).
 */
export const RUN_OUTPUT_STREAM_BYTES = 256 * 1024;

export type EventName = keyof EventMap;

/** One pushed event as it crosses IPC or the web shell's socket. */
export type EventMessage = { [E in EventName]: { event: E; payload: EventMap[E] } }[EventName];
