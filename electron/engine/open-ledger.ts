// Where the engine's audit records go: the ledger in WARDEN_HOME, shared by the app, the CLI
// and `warden serve` (appends from several processes serialize in SQLite).
import { join } from 'node:path';
import type { AuditSink } from './audit-sink.js';
import { Ledger } from './ledger/index.js';

export interface ClosableAuditSink extends AuditSink {
  close(): void;
}

export function ledgerFile(home: string): string {
  return join(home, 'ledger.db');
}

export function openAuditLedger(home: string): Ledger {
  return Ledger.open(ledgerFile(home), { keyDir: join(home, 'keys') });
}
