// What a hostile agent can make the run store hold: fresh run keys open at most maxOpenRuns runs,
// idle runs end (with a clock the spec moves), and ended runs beyond the cap leave memory with
// their keys, so a loop of denied calls with fresh keys cannot grow memory without bound.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { AuditRecord } from '../audit-sink.js';
import { EventBus } from '../event-bus.js';
import { AgentLimits } from './agent-limits.js';
import { Approvals } from './approvals.js';
import { ContextAuditSink } from './audit-context.js';
import { CallRunner } from './call-runner.js';
import { GatewayDenial } from './denial.js';
import { defaultPolicyPath, effectivePolicy, parsePolicy } from './policy-load.js';
import { MAX_ENDED_RUNS, RunStore, type Run } from './runs.js';

function setup(agents: { maxOpenRuns: number; runIdleMs: number }) {
  const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
  policy.agents = { ...policy.agents, ...agents, callsPerMinute: 1_000_000 };
  let t = 1_000_000;
  const now = () => t;
  const events = new EventBus();
  const runs = new RunStore(events, now);
  runs.limits = () => policy.agents;
  const records: AuditRecord[] = [];
  const audit = new ContextAuditSink({ append: (r: AuditRecord) => records.push(r) });
  const approvals = new Approvals(events);
  const runner = new CallRunner(runs, approvals, audit, new AgentLimits(() => policy.agents, now));
  const box = { id: 'b'.repeat(64), name: 'box' };
  /** What the gateway does for an agent's call that policy denies: open the run (or be refused), then the call. */
  const deniedCall = async (key: string): Promise<string> => {
    let run: Run;
    try {
      run = runs.open('mallory', key, box, () => policy.budgets);
    } catch (err) {
      if (err instanceof GatewayDenial) runner.refuseUnfiled({ agent: 'mallory', runKey: key }, 'exec', box.id, { argv: ['id'] }, err);
      throw err;
    }
    return runner
      .call({
        ctx: { agent: 'mallory', runKey: key },
        run,
        sandboxId: box.id,
        tool: 'exec',
        args: { argv: ['id'] },
        policy: effectivePolicy(policy, 'box'),
        verdict: () => ({ action: 'deny', source: 'test', reason: 'denied', scope: 'exec:id', summary: 'exec id', denyReason: 'policy' }),
        body: async () => undefined,
        settle: () => true,
      })
      .then(
        () => 'ok',
        (e: GatewayDenial) => e.message,
      );
  };
  return { runs, records, deniedCall, advance: (ms: number) => (t += ms), close: () => approvals.close() };
}

describe('runs an agent can open', () => {
  it('fresh keys open at most maxOpenRuns; the refusal is recorded; an idle run ends and frees its place', async () => {
    const s = setup({ maxOpenRuns: 3, runIdleMs: 60_000 });
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await s.deniedCall(`k${i}`).catch((e: GatewayDenial) => `refused: ${e.message}`));
    expect(results.filter((r) => r.startsWith('refused: limit: agent mallory has 3 runs open'))).toHaveLength(2);
    expect(s.records.filter((r) => (r.payload as { decision: { source: string } }).decision.source === 'agents.maxOpenRuns')).toHaveLength(
      2,
    );
    expect(s.runs.list({ status: 'active' })).toHaveLength(3);
    // an old key still reaches its run
    expect(await s.deniedCall('k0')).toBe('denied by policy: denied');
    s.advance(59_999);
    expect(await s.deniedCall('k9').catch(() => 'refused')).toBe('refused');
    s.advance(60_000);
    expect(await s.deniedCall('k9')).toBe('denied by policy: denied');
    const ended = s.runs.list({ status: 'expired' });
    expect(ended).toHaveLength(3);
    // a call in a run that ended for idleness says so
    expect(await s.deniedCall('k1')).toMatch(/has ended: it was idle for 1 min/);
    s.close();
  });

  it('a run with a call in flight is not idle', async () => {
    const s = setup({ maxOpenRuns: 3, runIdleMs: 60_000 });
    const run = s.runs.open('ann', 'long', null, () => parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'd').budgets);
    run.inFlight = 1;
    s.advance(10 * 60_000);
    s.runs.sweep(true);
    expect(run.status).toBe('active');
    run.inFlight = 0;
    s.runs.sweep(true);
    expect(run.status).toBe('expired');
    s.close();
  });

  it('3,000 denied calls with fresh keys leave memory bounded (open runs capped, ended runs trimmed with their keys)', async () => {
    const s = setup({ maxOpenRuns: 50, runIdleMs: 60_000 });
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      if (i % 100 === 99) s.advance(61_000); // now and then the runs go idle and end
      await s.deniedCall(`fresh-${i}`).catch(() => refused++);
    }
    expect(refused).toBeGreaterThan(0);
    const { runs, keys } = s.runs.size;
    expect(runs).toBeLessThanOrEqual(50 + MAX_ENDED_RUNS);
    expect(keys).toBeLessThanOrEqual(2 * (50 + MAX_ENDED_RUNS));
    expect(s.runs.list({ status: 'active' }).length).toBeLessThanOrEqual(50);
    s.close();
  });
});
