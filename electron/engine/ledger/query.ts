// Reading entries back: the filters the UI and the CLI need, always in seq order, always bounded.
import type { Database } from 'better-sqlite3';
import type { LedgerBrowse, LedgerEntry, LedgerQuery } from '../../../shared/types/ledger.js';

type Row = [number, string, string, string | null, string, string, Buffer, Buffer];

/**
 * A row as an entry. Rows are read back as stored, and a tampered file may hold anything: a payload
 * that is not JSON any more must not make the rest of the ledger unreadable (verification names it).
 */
function toEntry(r: Row): LedgerEntry {
  return {
    seq: r[0],
    time: String(r[1]),
    actor: String(r[2]),
    sandboxId: r[3] === null ? null : String(r[3]),
    kind: String(r[4]),
    payload: parsePayload(r[5]),
    prevHash: hex(r[6]),
    hash: hex(r[7]),
  };
}

function parsePayload(text: unknown): unknown {
  try {
    return JSON.parse(String(text)) as unknown;
  } catch {
    return { unreadablePayload: String(text).slice(0, 4096) };
  }
}

const hex = (b: unknown) => (Buffer.isBuffer(b) ? b.toString('hex') : '');

const COLUMNS = 'SELECT seq, time, actor, sandbox_id, kind, payload, prev_hash, hash FROM entries';

/**
 * WHERE terms and their bound values, built from the filters that were given. The view's form sends
 * '' for a cleared field (skipped); the CLI's query matches '' as a value.
 */
function conditions(skipEmpty: boolean): {
  where: string[];
  args: Array<string | number>;
  filter(sql: string, value: string | number | undefined): void;
} {
  const where: string[] = [];
  const args: Array<string | number> = [];
  return {
    where,
    args,
    filter(sql, value) {
      if (value === undefined || (skipEmpty && value === '')) return;
      where.push(sql);
      args.push(value);
    },
  };
}

export function queryEntries(db: Database, q: LedgerQuery): LedgerEntry[] {
  const { where, args, filter } = conditions(false);
  filter('seq >= ?', q.fromSeq);
  filter('seq <= ?', q.toSeq);
  filter('sandbox_id = ?', q.sandboxId);
  filter('kind = ?', q.kind);
  filter('actor = ?', q.actor);
  const limit = Math.min(Math.max(1, Math.floor(q.limit ?? 1000)), 100_000);
  const sql = `${COLUMNS}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq LIMIT ${limit}`;
  return (
    db
      .prepare(sql)
      .raw(true)
      .all(...args) as Row[]
  ).map(toEntry);
}

/**
 * The ledger view's page: newest first, filtered (a run is matched on the payload's runId), as steps.
 * A filter SQLite has no index for (kind, actor, run, time) may scan most of a big table to find a
 * page of rare matches: with a `slice`, the scan goes down in windows of that many seqs, yielding
 * between them, so an async caller can let other work run (the sync one passes none: one query).
 */
export function* browseSteps(
  db: Database,
  q: LedgerBrowse,
  slice = 0,
): Generator<void, { entries: LedgerEntry[]; nextBeforeSeq: number | null }, unknown> {
  const { where, args, filter } = conditions(true);
  filter('sandbox_id = ?', q.sandboxId);
  filter('kind = ?', q.kind);
  filter('actor = ?', q.actor);
  filter("json_extract(payload, '$.runId') = ?", q.runId);
  // Times are stored as ISO 8601 UTC with milliseconds, so they compare as text once normalized.
  filter('time >= ?', q.since === undefined ? undefined : new Date(q.since).toISOString());
  filter('time <= ?', q.until === undefined ? undefined : new Date(q.until).toISOString());
  const limit = Math.min(Math.max(1, Math.floor(q.limit ?? 200)), 1000);
  const rows: LedgerEntry[] = [];
  // Unfiltered pages (or ones the sandbox index serves) are one cheap query: no windows needed.
  const windows = slice > 0 && where.some((w) => !w.startsWith('sandbox_id'));
  if (!windows) {
    const all = q.beforeSeq === undefined ? where : ['seq < ?', ...where];
    const sql = `${COLUMNS}${all.length ? ` WHERE ${all.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ${limit + 1}`;
    rows.push(
      ...(
        db
          .prepare(sql)
          .raw(true)
          .all(...(q.beforeSeq === undefined ? args : [q.beforeSeq, ...args])) as Row[]
      ).map(toEntry),
    );
  } else {
    const stmt = db.prepare(`${COLUMNS} WHERE seq < ? AND seq >= ? AND ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`).raw(true);
    const top = (db.prepare('SELECT MAX(seq) FROM entries').pluck().get() as number | null) ?? 0;
    let before = Math.min(q.beforeSeq ?? top + 1, top + 1);
    while (before > 1 && rows.length <= limit) {
      const from = Math.max(1, before - slice);
      rows.push(...(stmt.all(before, from, ...args, limit + 1 - rows.length) as Row[]).map(toEntry));
      before = from;
      if (before > 1 && rows.length <= limit) yield;
    }
    // Rows below seq 1 exist only in a tampered file; the whole-table query would have shown them.
    if (before <= 1 && rows.length <= limit)
      rows.push(
        ...(
          db
            .prepare(`${COLUMNS} WHERE seq < 1 AND ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`)
            .raw(true)
            .all(...args, limit + 1 - rows.length) as Row[]
        ).map(toEntry),
      );
  }
  const more = rows.length > limit;
  const entries = more ? rows.slice(0, limit) : rows;
  return { entries, nextBeforeSeq: more ? entries[entries.length - 1]!.seq : null };
}

export function browseEntries(db: Database, q: LedgerBrowse): { entries: LedgerEntry[]; nextBeforeSeq: number | null } {
  const steps = browseSteps(db, q);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Distinct values for the view's filter menus (bounded: kinds and actors are few in practice). */
export function distinctValues(db: Database, column: 'kind' | 'actor', max = 200): string[] {
  return db.prepare(`SELECT DISTINCT ${column} FROM entries ORDER BY ${column} LIMIT ?`).pluck().all(max) as string[];
}

/** The kinds and actors of entries fromSeq..toSeq (one range scan: callers walk a big ledger in slices). */
export function kindsAndActors(db: Database, fromSeq: number, toSeq: number): { kinds: string[]; actors: string[] } {
  const pairs = db.prepare('SELECT DISTINCT kind, actor FROM entries WHERE seq >= ? AND seq <= ?').raw(true).all(fromSeq, toSeq) as Array<
    [unknown, unknown]
  >;
  return { kinds: [...new Set(pairs.map((p) => String(p[0])))], actors: [...new Set(pairs.map((p) => String(p[1])))] };
}
