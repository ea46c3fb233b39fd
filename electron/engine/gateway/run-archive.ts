// Runs and their tool calls on disk (runs.db beside the ledger), so the Runs view and /v1/runs keep
// their history across a restart and a kill -9. The RunStore writes every change through (one small
// upsert, synchronous: an answer an agent has seen is never ahead of the file); list and get read
// here, so runs of other doors on the same home show too. Every process that writes names itself as
// the owner of its runs; a run left active by an owner that is gone (crashed or closed) is marked
// interrupted when the next archive opens. The ledger stays the signed record; this is the index.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { RunDetail, RunInfo, RunQuery, ToolCallInfo } from '../../../shared/types/run.js';
import { keepPrivate } from '../ledger/private-file.js';

/** A list without a limit returns at most this many runs (the newest). */
export const DEFAULT_RUN_PAGE = 1000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, agent TEXT NOT NULL, sandbox_id TEXT, sandbox_name TEXT, status TEXT NOT NULL,
  started_at TEXT NOT NULL, owner TEXT NOT NULL, info TEXT NOT NULL, seq INTEGER NOT NULL UNIQUE);
CREATE INDEX IF NOT EXISTS runs_agent ON runs (agent, seq);
CREATE INDEX IF NOT EXISTS runs_sandbox ON runs (sandbox_id, seq);
CREATE INDEX IF NOT EXISTS runs_status ON runs (status, seq);
CREATE TABLE IF NOT EXISTS calls (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, idx INTEGER NOT NULL, info TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS calls_run ON calls (run_id, idx);
`;

/** Archives open in this process, by owner name: a run owned by one of them is not interrupted. */
const openHere = new Set<string>();

function ownerAlive(owner: string): boolean {
  const [pid] = owner.split(':');
  if (Number(pid) === process.pid) return openHere.has(owner);
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Calls still open when their run was interrupted: they never got an answer. */
const UNFINISHED = new Set<ToolCallInfo['status']>(['pending', 'awaiting-approval', 'running']);

export class RunArchive {
  /** This process and this archive: "pid:nonce". */
  readonly owner = `${process.pid}:${randomBytes(6).toString('hex')}`;
  private readonly putRun: Database.Statement;
  private readonly putCall: Database.Statement;

  private constructor(private readonly db: Database.Database) {
    this.putRun = db.prepare(
      `INSERT INTO runs (id, agent, sandbox_id, sandbox_name, status, started_at, owner, info, seq)
       VALUES (@id, @agent, @sandboxId, @sandboxName, @status, @startedAt, @owner, @info, (SELECT coalesce(max(seq), 0) + 1 FROM runs))
       ON CONFLICT (id) DO UPDATE SET sandbox_id = excluded.sandbox_id, sandbox_name = excluded.sandbox_name,
         status = excluded.status, info = excluded.info`,
    );
    this.putCall = db.prepare(
      `INSERT INTO calls (id, run_id, idx, info) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET info = excluded.info`,
    );
  }

  /** Opens (creating) the archive at `file`, and marks the runs of owners that are gone as interrupted. */
  static open(file: string): RunArchive {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    keepPrivate(file);
    const db = new Database(file, { timeout: 5000 });
    try {
      db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode: a killed process loses nothing; only a power cut may lose the last changes.
      db.pragma('synchronous = NORMAL');
      db.exec(SCHEMA);
      const archive = new RunArchive(db);
      openHere.add(archive.owner);
      archive.interruptOrphans();
      return archive;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** A call that ends after close (the gateway closed under it) is not written: close has recorded its run. */
  saveRun(run: RunInfo): void {
    if (!this.db.open) return;
    const { id, agent, sandboxId, sandboxName, status, startedAt } = run;
    this.putRun.run({ id, agent, sandboxId, sandboxName, status, startedAt, owner: this.owner, info: JSON.stringify(run) });
  }

  saveCall(call: ToolCallInfo): void {
    if (!this.db.open) return;
    this.putCall.run(call.id, call.runId, call.index, JSON.stringify(call));
  }

  /** Runs matching the query, oldest first; `limit` (default DEFAULT_RUN_PAGE) keeps the newest. */
  list(q: RunQuery = {}): RunInfo[] {
    const where: string[] = [];
    const args: unknown[] = [];
    const filter = (sql: string, ...values: unknown[]) => {
      where.push(sql);
      args.push(...values);
    };
    if (q.agent) filter('agent = ?', q.agent);
    if (q.status) filter('status = ?', q.status);
    if (q.since) filter('started_at >= ?', new Date(q.since).toISOString());
    // A sandbox by id, by name (the one it had), or by an id prefix as `podman ps` shows it.
    if (q.sandbox)
      filter('(sandbox_id = ? OR sandbox_name = ? OR substr(sandbox_id, 1, ?) = ?)', q.sandbox, q.sandbox, q.sandbox.length, q.sandbox);
    // A page before a run: the next older page is the one before the oldest run of this one.
    if (q.before) filter('seq < coalesce((SELECT seq FROM runs WHERE id = ?), 0)', q.before);
    const sql = `SELECT info FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
    const rows = this.db
      .prepare(sql)
      .pluck()
      .all(...args, q.limit ?? DEFAULT_RUN_PAGE) as string[];
    return rows.reverse().map((r) => JSON.parse(r) as RunInfo);
  }

  /** One run with its calls in order, or null. */
  detail(id: string): RunDetail | null {
    const info = this.db.prepare('SELECT info FROM runs WHERE id = ?').pluck().get(id) as string | undefined;
    if (info === undefined) return null;
    const calls = this.db.prepare('SELECT info FROM calls WHERE run_id = ? ORDER BY idx').pluck().all(id) as string[];
    return { ...(JSON.parse(info) as RunInfo), toolCalls: calls.map((c) => JSON.parse(c) as ToolCallInfo) };
  }

  /** Closes the file; runs of this owner still active become interrupted now (nothing can continue them). */
  close(): void {
    if (!openHere.delete(this.owner)) return;
    this.interrupt((owner) => owner === this.owner);
    this.db.close();
  }

  private interruptOrphans(): void {
    this.interrupt((owner) => !ownerAlive(owner));
  }

  /** Marks the active runs of the owners `gone` picks as interrupted, with their unanswered calls failed. */
  private interrupt(gone: (owner: string) => boolean): void {
    const active = this.db.prepare("SELECT id, owner, info FROM runs WHERE status = 'active'").all() as {
      id: string;
      owner: string;
      info: string;
    }[];
    const now = new Date().toISOString();
    this.db.transaction(() => {
      for (const row of active) {
        if (!gone(row.owner)) continue;
        const detail = this.detail(row.id)!;
        for (const call of detail.toolCalls) {
          if (!UNFINISHED.has(call.status)) continue;
          call.status = 'failed';
          call.endedAt = now;
          call.error = { code: 'E_INTERRUPTED', message: 'Warden stopped while this call was in flight: it has no answer' };
          this.saveCall(call);
        }
        const run: RunInfo = { ...(JSON.parse(row.info) as RunInfo), status: 'interrupted', endedAt: now };
        this.db.prepare('UPDATE runs SET status = ?, info = ? WHERE id = ?').run(run.status, JSON.stringify(run), row.id);
      }
    })();
  }
}
