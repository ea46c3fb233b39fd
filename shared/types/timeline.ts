// What the timeline of a run or a sandbox reads through the UI contract: the sandbox's resource
// history (kept by the door for the sandbox's whole life, downsampled: 1 s points for the last
// hours, minute and hour buckets beyond, each with its min/avg/max), and the ledger entries of that
// sandbox in a time window, in a compact form (seq, time, kind, a one-line label) so a run of
// thousands of calls loads in one answer.
import { z } from 'zod';

/** Container ids in full: history is filed by id (a sandbox that is gone has no name to resolve). */
export const FullSandboxIdSchema = z.string().regex(/^[0-9a-f]{64}$/, 'give the sandbox id in full (64 hex digits)');

/** Seconds per point of each resolution the history keeps, finest first. */
export const HISTORY_STEPS = [1, 60, 3600] as const;

export const MAX_HISTORY_POINTS = 10_000;

export const StatsHistoryRequestSchema = z
  .object({
    sandboxId: FullSandboxIdSchema,
    /** ms since epoch, inclusive; default: the sandbox's first point. */
    from: z.number().int().min(0).optional(),
    /** ms since epoch, inclusive; default: now. */
    to: z.number().int().min(0).optional(),
    /** The answer holds at most about this many points: the finest resolution that fits is used. */
    maxPoints: z.number().int().min(10).max(MAX_HISTORY_POINTS).optional(),
  })
  .strict()
  .refine((r) => r.from === undefined || r.to === undefined || r.from <= r.to, { message: 'from is after to', path: ['from'] });
export type StatsHistoryRequest = z.infer<typeof StatsHistoryRequestSchema>;

/**
 * Points in columns (what uPlot draws, and a third of the bytes of objects). Each point is a bucket
 * that starts at `time` and lasts `step` seconds: cpu and memory carry the bucket's average, min and
 * max; network is bytes per second (average, and the busiest second); pids average and max.
 */
export interface StatsHistory {
  sandboxId: string;
  time: number[];
  step: number[];
  cpu: number[];
  cpuMin: number[];
  cpuMax: number[];
  memory: number[];
  memoryMin: number[];
  memoryMax: number[];
  memoryLimit: number[];
  rx: number[];
  tx: number[];
  pids: number[];
  pidsMax: number[];
  /** The whole history's first and last point (ms), whatever range was asked; null when there is none. */
  first: number | null;
  last: number | null;
}

export const HISTORY_COLUMNS = [
  'time',
  'step',
  'cpu',
  'cpuMin',
  'cpuMax',
  'memory',
  'memoryMin',
  'memoryMax',
  'memoryLimit',
  'rx',
  'tx',
  'pids',
  'pidsMax',
] as const satisfies ReadonlyArray<keyof StatsHistory>;
export type HistoryColumn = (typeof HISTORY_COLUMNS)[number];

/** One resource sample of a sandbox at a time, rates worked out from the counters: what the history keeps and the page appends live. */
export interface ResourcePoint {
  time: number;
  cpu: number;
  memory: number;
  memoryLimit: number;
  /** bytes per second since the sample before */
  rx: number;
  tx: number;
  pids: number;
}

export const MAX_TIMELINE_ENTRIES = 20_000;

export const TimelineEntriesRequestSchema = z
  .object({
    /** A container id, an id prefix (4+) or a name the ledger knows. */
    sandboxId: z.string().min(1).max(128),
    /** ms since epoch, inclusive. */
    since: z.number().int().min(0).optional(),
    until: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(MAX_TIMELINE_ENTRIES).optional(),
  })
  .strict()
  .refine((r) => r.since === undefined || r.until === undefined || r.since <= r.until, {
    message: 'since is after until',
    path: ['since'],
  });
export type TimelineEntriesRequest = z.infer<typeof TimelineEntriesRequestSchema>;

/** One ledger entry as the timeline draws it. */
export interface TimelineEntry {
  seq: number;
  /** ms since epoch */
  time: number;
  kind: string;
  actor: string;
  /** One line for a person: the command, the destination, the verdict, the snapshot's tag … */
  label: string;
  /** Whether it went well, where the entry says (exit code, verdict, decision). */
  tone: 'ok' | 'bad' | 'info';
  /** net.connect / net.closed: the connection they share. */
  connId?: string;
}

export interface TimelineEntriesPage {
  entries: TimelineEntry[];
  /** More entries matched than `limit`: the oldest are given. */
  truncated: boolean;
}
