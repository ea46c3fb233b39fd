// An override keyed by a name glob cannot be claimed by an agent naming its sandbox to match: on a
// sandbox an agent created only what tightens applies; on one the user created, all of it.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { decideCommand } from './command-policy.js';
import { defaultPolicyPath, effectivePolicy, parsePolicy } from './policy-load.js';

function policy() {
  const p = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
  p.commands.default = 'ask';
  p.commands.rules.push({ command: ['curl'], action: 'deny' });
  p.sandboxes = {
    'ci-*': {
      commands: {
        default: 'allow',
        dynamic: 'allow',
        rules: [
          { command: ['make', 'curl'], action: 'allow' },
          { command: ['rm'], action: 'deny' },
        ],
      },
      budgets: { maxCalls: 100_000, outputBytes: 1024, breaker: { failures: 1000, cooldownMs: 0 } },
      approvals: { timeoutMs: 3_600_000 },
      paths: [{ path: '/workspace/secret', access: 'hidden' }],
    },
  };
  return p;
}

describe('per-sandbox overrides', () => {
  it('on a sandbox an agent created (named ci-…): only what tightens applies', () => {
    const p = policy();
    const eff = effectivePolicy(p, 'ci-mine', 'agent');
    expect(eff.commands.default).toBe('ask');
    expect(eff.commands.dynamic).toBe('deny');
    expect(decideCommand(eff.commands, ['make']).action).toBe('ask');
    expect(decideCommand(eff.commands, ['curl', 'x']).action).toBe('deny');
    expect(decideCommand(eff.commands, ['rm', 'x']).action).toBe('deny'); // a tightening rule applies
    expect(eff.budgets).toMatchObject({ maxCalls: p.budgets.maxCalls, outputBytes: 1024, breaker: p.budgets.breaker });
    expect(eff.approvals.timeoutMs).toBe(p.approvals.timeoutMs);
    expect(eff.paths[0]).toEqual({ path: '/workspace/secret', access: 'hidden' });
    // the default when the gateway does not say who created it: the agent's (tighten only)
    expect(effectivePolicy(p, 'ci-mine')).toEqual(eff);
  });

  it('on a sandbox the user created: all of it', () => {
    const p = policy();
    const eff = effectivePolicy(p, 'ci-build', 'user');
    expect(decideCommand(eff.commands, ['make']).action).toBe('allow');
    expect(decideCommand(eff.commands, ['curl', 'x']).action).toBe('deny'); // the strictest match still wins
    expect(eff.budgets.maxCalls).toBe(100_000);
    expect(eff.approvals.timeoutMs).toBe(3_600_000);
  });
});
