// What the engine needs of the ledger: an append. The engine records; doors never do.
export interface AuditRecord {
  actor: string;
  sandboxId?: string | null;
  kind: string;
  payload: unknown;
}

export interface AuditSink {
  append(record: AuditRecord): unknown;
  /** All or none, in order, in one transaction (one fsync); a sink without it gets one append each. */
  appendBatch?(records: AuditRecord[]): unknown[];
  /** Runs work the engine starts on its own (a background attestation) outside any caller's context. */
  detached?<T>(body: () => T): T;
}

/** Appends the records in one transaction where the sink can, else one by one. */
export function appendAll(sink: AuditSink, records: AuditRecord[]): unknown[] {
  if (records.length === 1) return [sink.append(records[0]!)];
  return sink.appendBatch ? sink.appendBatch(records) : records.map((r) => sink.append(r));
}

/** For tools that run without a ledger (doctor): records nothing. */
export const NO_AUDIT: AuditSink = { append: () => undefined };
