// The ledger's SQLite layout and the pragmas that make its durability promise.
//
// Durability: WAL with synchronous=FULL. Every commit fsyncs the WAL before it returns, so an append
// that returned survives a process crash and a power loss (as far as the disk honours fsync).
// NORMAL would be ~2× faster for single appends but may drop the last commits on power loss, and a
// checkpoint already signed over them would then accuse the ledger of losing its tail.
import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';

export const LEDGER_FORMAT = 'warden-ledger/1';

const TABLES = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entries (
  seq        INTEGER PRIMARY KEY,
  time       TEXT NOT NULL,
  actor      TEXT NOT NULL,
  sandbox_id TEXT,
  kind       TEXT NOT NULL,
  payload    TEXT NOT NULL,
  prev_hash  BLOB NOT NULL,
  hash       BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_sandbox ON entries(sandbox_id, seq) WHERE sandbox_id IS NOT NULL;
-- Complete Merkle subtrees of 256 leaves and up: derived from entries, cached so a root or a proof
-- over a million entries costs a few lookups plus one 256-leaf chunk.
CREATE TABLE IF NOT EXISTS tree_nodes (
  level INTEGER NOT NULL,
  idx   INTEGER NOT NULL,
  hash  BLOB NOT NULL,
  PRIMARY KEY (level, idx)
) WITHOUT ROWID;
-- Every signed checkpoint, oldest first; the newest is also kept in a file outside the database.
CREATE TABLE IF NOT EXISTS checkpoints (
  id     INTEGER PRIMARY KEY,
  size   INTEGER NOT NULL,
  time   TEXT NOT NULL,
  reason TEXT NOT NULL,
  note   TEXT NOT NULL
);
`;

// Append-only by construction: no UPDATE or DELETE on any table. INSERT OR REPLACE deletes the row
// it replaces without firing delete triggers unless recursive_triggers is on, so the small tables
// guard against it with an insert trigger. For entries that guard would cost a B-tree seek per
// append (~50% of a bare insert), so instead: our connections turn recursive_triggers on (REPLACE
// then hits entries_no_delete), the writer picks seq inside the write lock, seq is the primary key,
// and verification catches any row changed behind our back.

function guards(table: string, key: string): string {
  return `
CREATE TRIGGER IF NOT EXISTS ${table}_no_update BEFORE UPDATE ON ${table}
  BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: ${table} rows cannot be changed'); END;
CREATE TRIGGER IF NOT EXISTS ${table}_no_delete BEFORE DELETE ON ${table}
  BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: ${table} rows cannot be deleted'); END;
CREATE TRIGGER IF NOT EXISTS ${table}_no_replace BEFORE INSERT ON ${table}
  WHEN EXISTS (SELECT 1 FROM ${table} WHERE ${key})
  BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: ${table} rows cannot be replaced'); END;`;
}

const TRIGGERS = `
${guards('meta', 'key = NEW.key')}
${guards('tree_nodes', 'level = NEW.level AND idx = NEW.idx')}
${guards('checkpoints', 'id = NEW.id')}
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
  BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: entries cannot be changed'); END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
  BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: entries cannot be deleted'); END;
`;

export function setPragmas(db: Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('recursive_triggers = ON');
}

/** Creates tables and triggers if missing (idempotent, safe from several processes) and returns the log origin. */
export function applySchema(db: Database): string {
  setPragmas(db);
  return db
    .transaction(() => {
      db.exec(TABLES);
      db.exec(TRIGGERS);
      const insert = db.prepare('INSERT INTO meta (key, value) SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = ?)');
      insert.run('format', LEDGER_FORMAT, 'format');
      // The origin names this log in its checkpoints; random so two installs never share one.
      const origin = `warden.local/ledger/${randomBytes(8).toString('hex')}`;
      insert.run('origin', origin, 'origin');
      insert.run('created', new Date().toISOString(), 'created');
      return readMeta(db, 'origin')!;
    })
    .immediate();
}

export function readMeta(db: Database, key: string): string | null {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key) as unknown;
  return typeof row === 'string' ? row : null;
}
