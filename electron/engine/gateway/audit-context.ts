// The engine records every action through one audit sink. When an agent's call is running, the
// entries it causes carry the agent as actor, and their ledger seqs are handed to the tool call.
// AsyncLocalStorage carries who is acting through the engine without changing its signatures.
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendAll, appendDurably, type AuditRecord, type AuditSink } from '../audit-sink.js';

export interface AuditContext {
  actor: string;
  /** Called with each entry's seq once the ledger reports it. */
  onSeq?: (seq: number) => void;
}

function seqOf(value: unknown): number | undefined {
  if (value && typeof value === 'object' && 'seq' in value && typeof (value as { seq: unknown }).seq === 'number')
    return (value as { seq: number }).seq;
  return undefined;
}

export class ContextAuditSink implements AuditSink {
  private readonly als = new AsyncLocalStorage<AuditContext>();

  constructor(private readonly inner: AuditSink) {}

  run<T>(ctx: AuditContext, body: () => T): T {
    return this.als.run(ctx, body);
  }

  /** The engine's own work started during an agent's call is not the agent's (nor part of its call). */
  detached<T>(body: () => T): T {
    return this.als.exit(body);
  }

  append(record: AuditRecord): unknown {
    const ctx = this.als.getStore();
    const result = this.inner.append(ctx ? { ...record, actor: ctx.actor } : record);
    if (ctx) report(ctx, result);
    return result;
  }

  /** All or none, in one transaction where the inner sink can (the ledger's appendBatch). */
  appendBatch(records: AuditRecord[]): unknown[] {
    const ctx = this.als.getStore();
    const results = appendAll(this.inner, ctx ? records.map((r) => ({ ...r, actor: ctx.actor })) : records);
    if (ctx) for (const r of results) report(ctx, r);
    return results;
  }

  /** appendBatch that leaves the event loop free while another process holds the ledger's lock. */
  async appendBatchAsync(records: AuditRecord[]): Promise<unknown[]> {
    const ctx = this.als.getStore();
    const results = await appendDurably(this.inner, ctx ? records.map((r) => ({ ...r, actor: ctx.actor })) : records);
    if (ctx) for (const r of results) report(ctx, r);
    return results;
  }
}

function report(ctx: AuditContext, result: unknown): void {
  if (!ctx.onSeq) return;
  const seq = seqOf(result);
  if (seq !== undefined) ctx.onSeq(seq);
  else if (result instanceof Promise)
    result.then(
      (r) => (seqOf(r) !== undefined ? ctx.onSeq!(seqOf(r)!) : undefined),
      () => undefined,
    );
}
