// Each sandbox's resource history for its whole life, on disk (WARDEN_HOME/stats.db), so a timeline
// survives a page reload and a restart. Bounded by downsampling: every sample lands in a 1-second
// point (kept RAW_KEEP_MS), a 1-minute bucket (kept MINUTE_KEEP_MS) and a 1-hour bucket (kept
// HOUR_KEEP_MS), each keeping the average, the minimum and the maximum. A range query answers with
// the finest resolution that fits its point budget, and fills what that resolution no longer holds
// from the coarser ones, so an old stretch is coarse but never missing.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { HISTORY_COLUMNS, HISTORY_STEPS, type ResourcePoint, type StatsHistory } from '../../../shared/types/timeline.js';
import { keepPrivate } from '../ledger/private-file.js';

export const RAW_KEEP_MS = 2 * 3600_000;
export const MINUTE_KEEP_MS = 30 * 24 * 3600_000;
export const HOUR_KEEP_MS = 400 * 24 * 3600_000;
const KEEP_MS: Record<number, number> = { 1: RAW_KEEP_MS, 60: MINUTE_KEEP_MS, 3600: HOUR_KEEP_MS };
const DEFAULT_POINTS = 4000;

/** Where a home keeps it. */
export function statsHistoryFile(home: string): string {
  return join(home, 'stats.db');
}

/** One sample as the store takes it: rates already worked out from the counters. */
export interface HistorySample extends ResourcePoint {
  sandboxId: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS points (
  sandbox TEXT NOT NULL, step INTEGER NOT NULL, t INTEGER NOT NULL, n INTEGER NOT NULL,
  cpu REAL NOT NULL, cpu_min REAL NOT NULL, cpu_max REAL NOT NULL,
  mem REAL NOT NULL, mem_min REAL NOT NULL, mem_max REAL NOT NULL, mem_limit REAL NOT NULL,
  rx REAL NOT NULL, tx REAL NOT NULL, pids REAL NOT NULL, pids_max REAL NOT NULL,
  PRIMARY KEY (sandbox, step, t)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS points_age ON points (step, t);
`;

/** A running average in the bucket; min and max kept; the limit is the latest. */
const UPSERT = `
INSERT INTO points VALUES (@sandbox, @step, @t, 1, @cpu, @cpu, @cpu, @mem, @mem, @mem, @limit, @rx, @tx, @pids, @pids)
ON CONFLICT (sandbox, step, t) DO UPDATE SET
  n = n + 1,
  cpu = (cpu * n + excluded.cpu) / (n + 1), cpu_min = min(cpu_min, excluded.cpu), cpu_max = max(cpu_max, excluded.cpu),
  mem = (mem * n + excluded.mem) / (n + 1), mem_min = min(mem_min, excluded.mem), mem_max = max(mem_max, excluded.mem),
  mem_limit = excluded.mem_limit,
  rx = (rx * n + excluded.rx) / (n + 1), tx = (tx * n + excluded.tx) / (n + 1),
  pids = (pids * n + excluded.pids) / (n + 1), pids_max = max(pids_max, excluded.pids)`;

const COLUMNS = 't, step, cpu, cpu_min, cpu_max, mem, mem_min, mem_max, mem_limit, rx, tx, pids, pids_max';
type Row = [number, number, number, number, number, number, number, number, number, number, number, number, number];

export function emptyHistory(sandboxId: string): StatsHistory {
  const h = { sandboxId, first: null, last: null } as Partial<StatsHistory>;
  for (const c of HISTORY_COLUMNS) (h as Record<string, number[]>)[c] = [];
  return h as StatsHistory;
}

/** The finest step (seconds) whose points over [from, to] fit the budget. */
export function stepFor(from: number, to: number, maxPoints: number): number {
  for (const step of HISTORY_STEPS) if ((to - from) / (step * 1000) <= maxPoints) return step;
  return 3600;
}

export class StatsHistoryStore {
  private readonly upsert: Database.Statement;
  private readonly select: Database.Statement;
  private readonly extent: Database.Statement;
  private readonly prune: Database.Statement;
  private readonly writeMany: (samples: HistorySample[]) => void;
  private lastPrune = 0;

  private constructor(private readonly db: Database.Database) {
    this.upsert = db.prepare(UPSERT);
    this.select = db.prepare(`SELECT ${COLUMNS} FROM points WHERE sandbox = ? AND step = ? AND t >= ? AND t <= ? ORDER BY t`).raw(true);
    this.extent = db.prepare('SELECT min(t), max(t) FROM points WHERE sandbox = ? AND step = ?').raw(true);
    this.prune = db.prepare('DELETE FROM points WHERE step = ? AND t < ?');
    this.writeMany = db.transaction((samples: HistorySample[]) => {
      for (const s of samples) {
        for (const step of HISTORY_STEPS) {
          const ms = step * 1000;
          this.upsert.run({
            sandbox: s.sandboxId,
            step,
            t: Math.floor(s.time / ms) * ms,
            cpu: s.cpu,
            mem: s.memory,
            limit: s.memoryLimit,
            rx: s.rx,
            tx: s.tx,
            pids: s.pids,
          });
        }
      }
    });
  }

  static open(file: string): StatsHistoryStore {
    mkdirSync(dirname(file), { recursive: true });
    keepPrivate(file);
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    // A crash loses at most the last moments of history; never the file.
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 2000');
    db.exec(SCHEMA);
    return new StatsHistoryStore(db);
  }

  /** Adds samples in one transaction; drops points past their resolution's age now and then. */
  write(samples: HistorySample[], now = Date.now()): void {
    if (samples.length) this.writeMany(samples);
    if (now - this.lastPrune > 60_000) {
      this.lastPrune = now;
      for (const step of HISTORY_STEPS) this.prune.run(step, now - KEEP_MS[step]!);
    }
  }

  /**
   * Points of one sandbox over [from, to] (default: its whole history up to now), at the finest
   * resolution that fits maxPoints; the part of the range that resolution no longer holds comes from
   * the coarser ones.
   */
  history(sandboxId: string, opts: { from?: number; to?: number; maxPoints?: number } = {}, now = Date.now()): StatsHistory {
    const out = emptyHistory(sandboxId);
    let first: number | null = null;
    let last: number | null = null;
    for (const step of HISTORY_STEPS) {
      const [lo, hi] = this.extent.get(sandboxId, step) as [number | null, number | null];
      if (lo !== null && (first === null || lo < first)) first = lo;
      if (hi !== null && (last === null || hi > last)) last = hi;
    }
    out.first = first;
    out.last = last;
    if (first === null) return out;
    const from = opts.from ?? first;
    const to = opts.to ?? Math.max(now, last ?? now);
    const finest = stepFor(from, to, opts.maxPoints ?? DEFAULT_POINTS);
    // Coarsest first: each finer resolution takes over from where its own points begin.
    const parts: Row[][] = [];
    /** Where the finer points begin: a coarser bucket is taken only if it ends before that. */
    let begin = to;
    for (const step of HISTORY_STEPS.filter((s) => s >= finest)) {
      const ms = step * 1000;
      const rows = this.select.all(sandboxId, step, from - ms + 1, parts.length ? begin - ms : to) as Row[];
      parts.push(rows);
      if (rows.length) begin = rows[0]![0];
      if (begin < from + ms) break;
    }
    for (const rows of parts.reverse()) this.appendRows(out, rows);
    return out;
  }

  private appendRows(out: StatsHistory, rows: Row[]): void {
    for (const r of rows) {
      // Coarser buckets end before the finer part starts: times stay increasing.
      if (out.time.length && r[0] <= out.time[out.time.length - 1]!) continue;
      HISTORY_COLUMNS.forEach((c, i) => out[c].push(r[i]!));
    }
  }

  close(): void {
    this.db.close();
  }
}
