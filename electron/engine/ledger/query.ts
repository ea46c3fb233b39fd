// Reading entries back: the filters the UI and the CLI need, always in seq order, always bounded.
import type { Database } from 'better-sqlite3';
import type { LedgerBrowse, LedgerEntry, LedgerQuery } from '../../../shared/types/ledger.js';

type Row = [number, string, string, string | null, string, string, Buffer, Buffer];

function toEntry(r: Row): LedgerEntry {
  return { seq: r[0], time: r[1], actor: r[2], sandboxId: r[3], kind: r[4], payload: JSON.parse(r[5]) as unknown, prevHash: r[6].toString('hex'), hash: r[7].toString('hex') };
}

export function queryEntries(db: Database, q: LedgerQuery): LedgerEntry[] {
  const where: string[] = [];
  const args: Array<string | number> = [];
  const filter = (sql: string, value: string | number | undefined) => {
    if (value === undefined) return;
    where.push(sql);
    args.push(value);
  };
  filter('seq >= ?', q.fromSeq);
  filter('seq <= ?', q.toSeq);
  filter('sandbox_id = ?', q.sandboxId);
  filter('kind = ?', q.kind);
  filter('actor = ?', q.actor);
  const limit = Math.min(Math.max(1, Math.floor(q.limit ?? 1000)), 100_000);
  const sql = `SELECT seq, time, actor, sandbox_id, kind, payload, prev_hash, hash FROM entries${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq LIMIT ${limit}`;
  return (db.prepare(sql).raw(true).all(...args) as Row[]).map(toEntry);
}

/** The ledger view's page: newest first, filtered (a run is matched on the payload's runId). */
export function browseEntries(db: Database, q: LedgerBrowse): { entries: LedgerEntry[]; nextBeforeSeq: number | null } {
  const where: string[] = [];
  const args: Array<string | number> = [];
  const filter = (sql: string, value: string | number | undefined) => {
    if (value === undefined || value === '') return;
    where.push(sql);
    args.push(value);
  };
  filter('seq < ?', q.beforeSeq);
  filter('sandbox_id = ?', q.sandboxId);
  filter('kind = ?', q.kind);
  filter('actor = ?', q.actor);
  filter("json_extract(payload, '$.runId') = ?", q.runId);
  // Times are stored as ISO 8601 UTC with milliseconds, so they compare as text once normalized.
  filter('time >= ?', q.since === undefined ? undefined : new Date(q.since).toISOString());
  filter('time <= ?', q.until === undefined ? undefined : new Date(q.until).toISOString());
  const limit = Math.min(Math.max(1, Math.floor(q.limit ?? 200)), 1000);
  const sql = `SELECT seq, time, actor, sandbox_id, kind, payload, prev_hash, hash FROM entries${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ${limit + 1}`;
  const rows = (db.prepare(sql).raw(true).all(...args) as Row[]).map(toEntry);
  const more = rows.length > limit;
  const entries = more ? rows.slice(0, limit) : rows;
  return { entries, nextBeforeSeq: more ? entries[entries.length - 1]!.seq : null };
}

/** Distinct values for the view's filter menus (bounded: kinds and actors are few in practice). */
export function distinctValues(db: Database, column: 'kind' | 'actor', max = 200): string[] {
  return db.prepare(`SELECT DISTINCT ${column} FROM entries ORDER BY ${column} LIMIT ?`).pluck().all(max) as string[];
}
