// Denials the ledger could not take when they happened (another process held its lock past the
// deadline). A denied call does not run either way, but its record must not vanish silently: the
// caller is told, the process warns on stderr, and the entries are written here once the ledger
// takes them (each keeps its own time and call id in its payload).
import type { AuditRecord } from '../audit-sink.js';
import type { ContextAuditSink } from './audit-context.js';

const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
/** Held at most; past this the process says how many it could not keep (memory stays bounded). */
const MAX_HELD = 10_000;

export class LateRecords {
  private held: AuditRecord[] = [];
  private lost = 0;
  private retryMs = FIRST_RETRY_MS;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly audit: ContextAuditSink,
    private readonly warn: (line: string) => void = (line) => process.stderr.write(`warden: WARNING: ${line}\n`),
  ) {}

  get pending(): number {
    return this.held.length;
  }

  hold(record: AuditRecord, err: unknown): void {
    if (this.held.length >= MAX_HELD) this.lost++;
    else this.held.push({ ...record, payload: { ...(record.payload as object), recordedLate: true, deniedAt: new Date().toISOString() } });
    this.warn(
      `the ledger did not take a ${record.kind} entry (${(err as Error).message}); the call was refused and the entry will be written when the ledger takes it (${this.held.length} waiting${this.lost ? `, ${this.lost} could not be kept` : ''})`,
    );
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.retry(), this.retryMs);
    this.timer.unref();
  }

  private async retry(): Promise<void> {
    this.timer = null;
    const batch = this.held.splice(0);
    if (batch.length === 0) return;
    try {
      await this.audit.appendBatchAsync(batch);
      this.retryMs = FIRST_RETRY_MS;
      this.warn(
        `${batch.length} refused call(s) recorded late in the ledger${this.lost ? `; ${this.lost} could not be kept and are not in it` : ''}`,
      );
      this.lost = 0;
    } catch {
      this.held.unshift(...batch);
      this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
    }
    if (this.held.length) this.schedule();
  }
}
