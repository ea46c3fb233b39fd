// Where the engine's audit records go. Until the ledger is wired, nothing is recorded.
import type { AuditSink } from './audit-sink.js';

export interface ClosableAuditSink extends AuditSink {
  close(): void;
}

export function openAuditLedger(_home: string): ClosableAuditSink {
  return { append: () => undefined, close: () => undefined };
}
