// The order of a call's record: its decision is a ledger entry before anything is acknowledged or
// done, also when a body writes it with its own first entry (one transaction, one fsync).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { ToolCallInfo } from '../../../shared/types/run.js';
import type { AuditRecord } from '../audit-sink.js';
import { EventBus } from '../event-bus.js';
import { Approvals } from './approvals.js';
import { ContextAuditSink } from './audit-context.js';
import { CallRunner } from './call-runner.js';
import type { CallSpec } from './call-spec.js';
import { defaultPolicyPath, effectivePolicy, parsePolicy } from './policy-load.js';
import { RunStore } from './runs.js';

/** A ledger stand-in that keeps each transaction apart and can refuse. */
class FakeLedger {
  readonly commits: AuditRecord[][] = [];
  refuse = false;
  private seq = 0;
  append(r: AuditRecord) {
    return this.appendBatch([r])[0]!;
  }
  appendBatch(rs: AuditRecord[]) {
    if (this.refuse) throw new Error('disk full');
    this.commits.push(rs);
    return rs.map(() => ({ seq: ++this.seq }));
  }
  get kinds(): string[][] {
    return this.commits.map((c) => c.map((r) => r.kind));
  }
}

function setup() {
  const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
  const events = new EventBus();
  const runs = new RunStore(events);
  const approvals = new Approvals(events);
  const ledger = new FakeLedger();
  const audit = new ContextAuditSink(ledger);
  const runner = new CallRunner(runs, approvals, audit);
  const run = runs.open('alice', null, { id: 'a'.repeat(64), name: 'box' }, () => policy.budgets);
  const spec = <T>(over: Partial<CallSpec<T>>): CallSpec<T> => ({
    ctx: { agent: 'alice', runKey: null },
    run,
    sandboxId: 'a'.repeat(64),
    tool: 'exec',
    args: { argv: ['true'] },
    policy: effectivePolicy(policy, 'box'),
    verdict: () => ({ action: 'allow', source: 'test', reason: 'allowed', scope: 'exec:true', summary: 'exec true' }),
    body: async () => undefined as T,
    settle: () => true,
    ...over,
  });
  return { runner, ledger, audit, spec, close: () => approvals.close() };
}

describe('a call whose body writes its decision', () => {
  it('writes the decision and the body’s first entry in one transaction, and says "running" only after it', async () => {
    const { runner, ledger, audit, spec, close } = setup();
    const order: string[] = [];
    let call: ToolCallInfo | null = null;
    await runner.call(
      spec({
        writesDecision: true,
        hooks: { onRunning: () => order.push(`running after ${ledger.commits.length} commit(s)`) },
        body: async (c, decision) => {
          call = c;
          expect(ledger.commits).toHaveLength(0);
          audit.appendBatch([decision!.record, { actor: 'x', kind: 'exec.started', payload: {} }]);
          decision!.written();
          order.push('effect');
          audit.append({ actor: 'x', kind: 'exec.finished', payload: {} });
        },
      }),
    );
    expect(ledger.kinds).toEqual([['policy.allowed', 'exec.started'], ['exec.finished']]);
    expect(ledger.commits.flat().every((r) => r.actor === 'alice')).toBe(true);
    expect(order).toEqual(['running after 1 commit(s)', 'effect']);
    expect(call!.ledgerSeqs).toEqual([1, 2, 3]);
    expect(call!.status).toBe('ok');
    close();
  });

  it('does not run when the ledger refuses the decision, and says why', async () => {
    const { runner, ledger, spec, close } = setup();
    ledger.refuse = true;
    let ran = false;
    let running = false;
    const failed = runner.call(
      spec({
        writesDecision: true,
        hooks: { onRunning: () => (running = true) },
        body: async (_c, decision) => {
          const d = decision!;
          new ContextAuditSink(ledger).appendBatch([d.record]); // throws: nothing after it happens
          d.written();
          ran = true;
        },
      }),
    );
    await expect(failed).rejects.toMatchObject({ code: 'E_LEDGER' });
    expect(ran).toBe(false);
    expect(running).toBe(false);
    close();
  });

  it('still records the decision when the body fails before writing it, or never writes it', async () => {
    const { runner, ledger, spec, close } = setup();
    await expect(
      runner.call(spec({ writesDecision: true, body: async () => Promise.reject(new Error('no such sandbox')) })),
    ).rejects.toThrow('no such sandbox');
    await runner.call(spec({ writesDecision: true, body: async () => undefined }));
    expect(ledger.kinds).toEqual([['policy.allowed'], ['policy.allowed']]);
    close();
  });

  it('without writesDecision, the runner writes the decision before the body starts', async () => {
    const { runner, ledger, spec, close } = setup();
    await runner.call(
      spec({
        body: async (_c, decision) => {
          expect(decision).toBeNull();
          expect(ledger.kinds).toEqual([['policy.allowed']]);
        },
      }),
    );
    close();
  });
});
