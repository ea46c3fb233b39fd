// Pending `ask`s: a call waits here for a person's decision (approve once, approve for the rest of
// the run, deny) until its deadline, when it is denied. Requests and decisions are pushed on the
// event bus so the UI shows them; who decided and when is kept for the record.
import { randomBytes } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import type { ApprovalDecision, ApprovalInfo } from '../../../shared/types/run.js';
import type { EventBus } from '../event-bus.js';

interface Pending {
  info: ApprovalInfo;
  settle: (info: ApprovalInfo) => void;
  timer: NodeJS.Timeout;
}

export type ApprovalRequest = Omit<ApprovalInfo, 'id' | 'requestedAt' | 'deadline' | 'status' | 'decidedBy' | 'decidedAt' | 'decision'>;

export class Approvals {
  private readonly pending = new Map<string, Pending>();
  private readonly recent: ApprovalInfo[] = [];

  private watchers = 0;

  constructor(private readonly events: EventBus) {}

  /** A door that can put approvals before a person (the UI, `warden run approvals --follow`) says so. */
  watch(): () => void {
    this.watchers++;
    let stopped = false;
    return () => {
      if (!stopped) this.watchers--;
      stopped = true;
    };
  }

  watching(): boolean {
    return this.watchers > 0;
  }

  /** Waits for a decision; resolves with the decided approval (status approved, denied or timeout). */
  request(req: ApprovalRequest, timeoutMs: number, onPending?: (info: ApprovalInfo) => void): Promise<ApprovalInfo> {
    const now = Date.now();
    const info: ApprovalInfo = {
      ...req,
      id: `apr_${randomBytes(8).toString('hex')}`,
      requestedAt: new Date(now).toISOString(),
      deadline: new Date(now + timeoutMs).toISOString(),
      status: 'pending',
      decidedBy: null,
      decidedAt: null,
      decision: null,
    };
    return new Promise<ApprovalInfo>((resolve) => {
      const timer = setTimeout(() => this.finish(info.id, { status: 'timeout', decision: null, decidedBy: null }), timeoutMs);
      timer.unref();
      this.pending.set(info.id, { info, settle: resolve, timer });
      onPending?.(info);
      this.events.emit('approval.requested', info);
    });
  }

  decide(id: string, decision: ApprovalDecision, by: string): ApprovalInfo {
    const p = this.pending.get(id);
    if (!p) {
      const done = this.recent.find((a) => a.id === id);
      if (done)
        throw new WardenError('E_CONFLICT', `approval ${id} was already ${done.status}${done.decidedBy ? ` by ${done.decidedBy}` : ''}`);
      throw new WardenError('E_NOT_FOUND', `no pending approval ${id}`, 'list pending approvals with `warden run approvals`');
    }
    return this.finish(id, { status: decision === 'deny' ? 'denied' : 'approved', decision, decidedBy: by })!;
  }

  private finish(id: string, outcome: Pick<ApprovalInfo, 'status' | 'decision' | 'decidedBy'>): ApprovalInfo | null {
    const p = this.pending.get(id);
    if (!p) return null;
    this.pending.delete(id);
    clearTimeout(p.timer);
    const info: ApprovalInfo = { ...p.info, ...outcome, decidedAt: new Date().toISOString() };
    this.recent.push(info);
    if (this.recent.length > 1000) this.recent.shift();
    this.events.emit('approval.decided', info);
    p.settle(info);
    return info;
  }

  list(): ApprovalInfo[] {
    return [...this.pending.values()].map((p) => p.info);
  }

  /** Denies everything still pending (shutdown). */
  close(): void {
    for (const id of [...this.pending.keys()]) this.finish(id, { status: 'denied', decision: 'deny', decidedBy: 'system (shutting down)' });
  }
}
