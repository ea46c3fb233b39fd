// What the engine needs of the ledger: an append. The engine records; doors never do.
export interface AuditRecord {
  actor: string;
  sandboxId?: string | null;
  kind: string;
  payload: unknown;
}

export interface AuditSink {
  append(record: AuditRecord): unknown;
}

/** For tools that run without a ledger (doctor): records nothing. */
export const NO_AUDIT: AuditSink = { append: () => undefined };
