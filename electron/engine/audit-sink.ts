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
  /**
   * appendBatch without holding the event loop while the store is locked by another process (the
   * ledger retries in the background until its deadline, then rejects). Live processes use it.
   */
  appendBatchAsync?(records: AuditRecord[]): Promise<unknown[]>;
  /** Runs work the engine starts on its own (a background attestation) outside any caller's context. */
  detached?<T>(body: () => T): T;
}

/** Appends the records in one transaction where the sink can, else one by one. */
export function appendAll(sink: AuditSink, records: AuditRecord[]): unknown[] {
  if (records.length === 1) return [sink.append(records[0]!)];
  return sink.appendBatch ? sink.appendBatch(records) : records.map((r) => sink.append(r));
}

/** The records, all or none, durable when it resolves; the event loop stays free where the sink allows. */
export async function appendDurably(sink: AuditSink, records: AuditRecord[]): Promise<unknown[]> {
  if (sink.appendBatchAsync) return sink.appendBatchAsync(records);
  return appendAll(sink, records);
}

/** Records nothing: for a spec that exercises a part of the engine without a ledger (call-output.int.spec). */
export const NO_AUDIT: AuditSink = { append: () => undefined };
