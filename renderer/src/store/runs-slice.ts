// Agents' runs, their tool calls, the output of running calls and pending approvals, as pushed by
// the gateway (live/runs-sync.ts applies them). Everything here is bounded: calls are kept for the
// runs most recently touched, output for the calls most recently written to, each call's text capped.
import type { StateCreator } from 'zustand';
import type { EventMap } from '../../../shared/contracts/events.js';
import { RUN_OUTPUT_STREAM_BYTES } from '../../../shared/contracts/events.js';
import type { ApprovalInfo, CallStatus, RunDetail, RunInfo, ToolCallInfo } from '../../../shared/types/run.js';
import type { AppState } from './index.js';

/** Characters of output kept per call (the gateway streams at most this many bytes of it). */
export const OUTPUT_CHARS_PER_CALL = RUN_OUTPUT_STREAM_BYTES;
/** Calls whose output is kept; older ones fall back to the call's preview. */
export const OUTPUT_CALLS_KEPT = 100;
/** Runs whose calls are kept (the selected run always is). */
export const CALL_RUNS_KEPT = 50;
/** Calls kept per run (the newest). */
export const CALLS_PER_RUN_KEPT = 5000;
const SEGMENT_CHARS = 8 * 1024;
const MAX_SEGMENTS = 2000;

export interface OutputSegment {
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface CallOutput {
  segments: OutputSegment[];
  chars: number;
  /** More came than is kept here. */
  cut: boolean;
  /** Some of it was pushed while this window was not following (it joined late, or the link dropped). */
  partial?: true;
}

export interface PendingApproval extends ApprovalInfo {
  /** The deadline on this machine's clock (the server's clock may differ). */
  localDeadline: number;
}

export interface RunsSlice {
  runs: Record<string, RunInfo>;
  runsLoaded: boolean;
  /** Tool calls by run id, in order. */
  runCalls: Record<string, ToolCallInfo[]>;
  /** Runs whose calls were loaded whole (run.get) and followed since. */
  runCallsComplete: Record<string, true>;
  /** Streamed output by call id. */
  callOutput: Record<string, CallOutput>;
  approvals: Record<string, PendingApproval>;
  /** Approvals being decided from this window. */
  deciding: Record<string, true>;
  selectedRunId: string | null;

  setRuns(list: RunInfo[]): void;
  upsertRun(run: RunInfo): void;
  setRunDetail(detail: RunDetail): void;
  upsertCall(call: ToolCallInfo): void;
  appendOutput(output: EventMap['run.output']): void;
  /** After a (re)connect: calls and output may have been missed, so loaded runs must be loaded again. */
  resynced(): void;
  setApprovals(list: ApprovalInfo[]): void;
  addApproval(approval: ApprovalInfo): void;
  removeApproval(id: string): void;
  setDeciding(id: string, busy: boolean): void;
  selectRun(id: string | null): void;
}

const STATUS_RANK: Record<CallStatus, number> = { pending: 0, 'awaiting-approval': 1, running: 2, ok: 3, failed: 3, denied: 3 };

/** A call only moves forward (status, ledger seqs): of two copies, the one further along wins; on a tie, the newer. */
export function newerCall(current: ToolCallInfo | undefined, incoming: ToolCallInfo): ToolCallInfo {
  if (!current) return incoming;
  const rank = (c: ToolCallInfo) => STATUS_RANK[c.status] * 1e6 + c.ledgerSeqs.length;
  return rank(incoming) >= rank(current) ? incoming : current;
}

/** Inserts or replaces a call, keeping the list in call order. */
export function mergeCall(list: ToolCallInfo[] | undefined, call: ToolCallInfo): ToolCallInfo[] {
  const calls = list ?? [];
  const at = calls.findIndex((c) => c.id === call.id);
  if (at >= 0) {
    const merged = newerCall(calls[at], call);
    if (merged === calls[at]) return calls;
    const next = calls.slice();
    next[at] = merged;
    return next;
  }
  const next = [...calls, call];
  if (calls.length && calls[calls.length - 1]!.index > call.index) next.sort((a, b) => a.index - b.index);
  return next.length > CALLS_PER_RUN_KEPT ? next.slice(-CALLS_PER_RUN_KEPT) : next;
}

// Terminal control sequences would show as garbage in a <pre>: colours, cursor moves and OSC titles go.
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** Output as plain text for display: no terminal control sequences, CRLF as LF, lone CR dropped. */
export function plainText(data: string): string {
  return data.replace(/\r\n/g, '\n').replace(CONTROL, '').replace(/\r/g, '');
}

/** Appends text to a call's output, within OUTPUT_CHARS_PER_CALL characters and MAX_SEGMENTS pieces. */
export function appendText(prev: CallOutput | undefined, stream: OutputSegment['stream'], data: string): CallOutput {
  const out = prev ?? { segments: [], chars: 0, cut: false };
  if (out.cut) return out;
  const room = OUTPUT_CHARS_PER_CALL - out.chars;
  const text = data.length > room ? data.slice(0, room) : data;
  const cut = text.length < data.length;
  if (!text) return { ...out, cut: cut || out.cut };
  const segments = out.segments.slice();
  const last = segments[segments.length - 1];
  if (last && last.stream === stream && last.text.length + text.length <= SEGMENT_CHARS)
    segments[segments.length - 1] = { stream, text: last.text + text };
  else if (segments.length < MAX_SEGMENTS) segments.push({ stream, text });
  else return { ...out, cut: true };
  return { ...out, segments, chars: out.chars + text.length, cut };
}

/** Drops the oldest keys of a record beyond `max`, never those in `keep`. */
function trimRecord<T>(record: Record<string, T>, max: number, keep: ReadonlySet<string>): Record<string, T> {
  const keys = Object.keys(record);
  if (keys.length <= max) return record;
  const next = { ...record };
  let extra = keys.length - max;
  for (const k of keys) {
    if (extra <= 0) break;
    if (keep.has(k)) continue;
    delete next[k];
    extra--;
  }
  return next;
}

/** Calls of at most CALL_RUNS_KEPT runs (the selected one and the newest kept); a dropped run is no longer complete. */
function keepCalls(
  s: RunsSlice,
  runCalls: Record<string, ToolCallInfo[]>,
  complete: Record<string, true>,
): Pick<RunsSlice, 'runCalls' | 'runCallsComplete'> {
  const keep = new Set(Object.keys(runCalls).slice(-1));
  if (s.selectedRunId) keep.add(s.selectedRunId);
  const kept = trimRecord(runCalls, CALL_RUNS_KEPT, keep);
  if (kept === runCalls) return { runCalls, runCallsComplete: complete };
  return {
    runCalls: kept,
    runCallsComplete: Object.fromEntries(Object.entries(complete).filter(([id]) => id in kept)) as Record<string, true>,
  };
}

export const createRunsSlice: StateCreator<AppState, [], [], RunsSlice> = (set) => ({
  runs: {},
  runsLoaded: false,
  runCalls: {},
  runCallsComplete: {},
  callOutput: {},
  approvals: {},
  deciding: {},
  selectedRunId: null,

  setRuns: (list) => set({ runs: Object.fromEntries(list.map((r) => [r.id, r])), runsLoaded: true }),
  upsertRun: (run) => set((s) => ({ runs: { ...s.runs, [run.id]: run } })),
  setRunDetail: (detail) =>
    set((s) => {
      const { toolCalls, ...info } = detail;
      // Calls pushed while the request was out may be further along than the answer: merge, don't replace.
      let calls = s.runCalls[detail.id] ?? [];
      for (const c of toolCalls) calls = mergeCall(calls, c);
      const runCalls = { ...s.runCalls };
      delete runCalls[detail.id]; // re-inserted last: the most recently touched
      runCalls[detail.id] = calls;
      return { runs: { ...s.runs, [detail.id]: info }, ...keepCalls(s, runCalls, { ...s.runCallsComplete, [detail.id]: true }) };
    }),
  upsertCall: (call) =>
    set((s) => {
      const prev = s.runCalls[call.runId];
      const calls = mergeCall(prev, call);
      if (calls === prev) return {};
      const runCalls = { ...s.runCalls, [call.runId]: calls };
      return prev ? { runCalls } : keepCalls(s, runCalls, s.runCallsComplete);
    }),
  appendOutput: ({ runId, callId, stream, data }) =>
    set((s) => {
      const prev = s.callOutput[callId];
      // Output of a call this window has not seen start: what came before is missing.
      const joinedLate = !prev && !s.runCalls[runId]?.some((c) => c.id === callId);
      const next = appendText(joinedLate ? { segments: [], chars: 0, cut: false, partial: true } : prev, stream, plainText(data));
      if (next === prev) return {};
      const callOutput = { ...s.callOutput, [callId]: next };
      return { callOutput: prev ? callOutput : trimRecord(callOutput, OUTPUT_CALLS_KEPT, new Set([callId])) };
    }),
  resynced: () =>
    set((s) => {
      // Output of calls still going when the link dropped has a hole in it now.
      const going = new Set<string>();
      for (const calls of Object.values(s.runCalls)) for (const c of calls) if (c.endedAt === null) going.add(c.id);
      const callOutput = { ...s.callOutput };
      for (const id of going) if (callOutput[id]) callOutput[id] = { ...callOutput[id], partial: true };
      return { runCallsComplete: {}, callOutput };
    }),
  setApprovals: (list) =>
    set({
      approvals: Object.fromEntries(
        list.filter((a) => a.status === 'pending').map((a) => [a.id, { ...a, localDeadline: Date.parse(a.deadline) }]),
      ),
    }),
  addApproval: (a) =>
    set((s) => {
      if (a.status !== 'pending') return {};
      // Just requested: the time it has left is deadline − requestedAt, counted from now.
      const localDeadline = Date.now() + Math.max(0, Date.parse(a.deadline) - Date.parse(a.requestedAt));
      return { approvals: { ...s.approvals, [a.id]: { ...a, localDeadline } } };
    }),
  removeApproval: (id) =>
    set((s) => {
      if (!s.approvals[id] && !s.deciding[id]) return {};
      const approvals = { ...s.approvals };
      delete approvals[id];
      const deciding = { ...s.deciding };
      delete deciding[id];
      return { approvals, deciding };
    }),
  setDeciding: (id, busy) =>
    set((s) => {
      const deciding = { ...s.deciding };
      if (busy) deciding[id] = true;
      else delete deciding[id];
      return { deciding };
    }),
  selectRun: (id) => set({ selectedRunId: id }),
});
