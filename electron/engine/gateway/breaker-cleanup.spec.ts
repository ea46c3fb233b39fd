// Destroying a sandbox is cleanup, not a failure: it goes through while the run's breaker is open,
// and neither closes nor trips the breaker for the calls after it.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { ToolName } from '../../../shared/types/run.js';
import { EventBus } from '../event-bus.js';
import { Approvals } from './approvals.js';
import { ContextAuditSink } from './audit-context.js';
import { CallRunner } from './call-runner.js';
import { defaultPolicyPath, effectivePolicy, parsePolicy } from './policy-load.js';
import { RunStore } from './runs.js';

describe("a run's open breaker", () => {
  it('does not stop a sandbox.destroy, and stays open for other calls', async () => {
    const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
    policy.budgets.breaker = { failures: 2, cooldownMs: 3_600_000 };
    const events = new EventBus();
    const runs = new RunStore(events);
    const approvals = new Approvals(events);
    const runner = new CallRunner(runs, approvals, new ContextAuditSink({ append: () => undefined }));
    const run = runs.open('ann', null, { id: 'd'.repeat(64), name: 'box' }, () => policy.budgets);
    const call = (tool: ToolName, ok: boolean) =>
      runner
        .call({
          ctx: { agent: 'ann', runKey: null },
          run,
          sandboxId: 'd'.repeat(64),
          tool,
          args: {},
          policy: effectivePolicy(policy, 'box'),
          verdict: () => ({ action: 'allow', source: 'test', reason: 'allowed', scope: tool, summary: tool }),
          body: async () => ok,
          settle: (_c, v) => v,
        })
        .then(
          () => 'ran',
          (e: { code: string }) => e.code,
        );
    expect(await call('exec', false)).toBe('ran');
    expect(await call('exec', false)).toBe('ran');
    expect(run.breaker.info().state).toBe('open');
    expect(await call('exec', true)).toBe('E_CONFLICT');
    expect(await call('sandbox.destroy', true)).toBe('ran');
    expect(run.breaker.info().state).toBe('open');
    expect(await call('exec', true)).toBe('E_CONFLICT');
    approvals.close();
  });
});
