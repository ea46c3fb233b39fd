// snapshot-then-allow as a command rule: it allows and asks for a snapshot first, sits between allow
// and ask in strictness, is seen through shells and wrappers like any rule, and never survives a deny.
import { describe, expect, it } from 'vitest';
import { CommandRuleSchema, PolicySchema } from '../../../shared/types/policy.js';
import { decideCommand, type CommandPolicy } from './command-policy.js';
import { execVerdict } from './approval-scope.js';
import { effectivePolicy } from './policy-load.js';

const policy: CommandPolicy = {
  default: 'allow',
  dynamic: 'deny',
  rules: [
    CommandRuleSchema.parse({ command: 'rm', args: '-*r*', action: 'snapshot-then-allow' }),
    CommandRuleSchema.parse({ command: 'git', args: 'push', action: 'ask' }),
    CommandRuleSchema.parse({ command: 'shred', action: 'deny' }),
  ],
};
const decide = (argv: string[]) => decideCommand(policy, argv);

describe('snapshot-then-allow', () => {
  it('allows the command and asks for a snapshot first', () => {
    expect(decide(['rm', '-rf', 'build'])).toMatchObject({ action: 'allow', snapshot: true, source: 'snapshot-then-allow rm [-*r*]' });
    expect(decide(['rm', 'one-file'])).toMatchObject({ action: 'allow', snapshot: false });
    expect(decide(['ls'])).toMatchObject({ action: 'allow', snapshot: false });
  });

  it('is found through shells, wrappers and quoting, as any rule is', () => {
    for (const argv of [
      ['sh', '-c', 'cd /workspace && rm -rf x'],
      ['bash', '-c', "'r''m' -fr x"],
      ['env', 'A=1', 'nice', '/bin/rm', '-r', 'x'],
      ['sh', '-c', 'find . -name "*.o" -exec rm -r {} +'],
      ['sh', '-c', 'echo $(rm -r x)'],
    ]) {
      expect(decide(argv), argv.join(' ')).toMatchObject({ action: 'allow', snapshot: true });
    }
  });

  it('an ask elsewhere in the command still asks, and keeps the snapshot for after the approval', () => {
    const d = decide(['sh', '-c', 'rm -rf x && git push']);
    expect(d).toMatchObject({ action: 'ask', snapshot: true });
    expect(execVerdict({ ...policy, rules: policy.rules }, ['sh', '-c', 'rm -rf x && git push'])).toMatchObject({
      action: 'ask',
      snapshot: true,
    });
  });

  it('a deny anywhere wins, and asks for no snapshot', () => {
    expect(decide(['sh', '-c', 'rm -rf x; shred y'])).toMatchObject({ action: 'deny', snapshot: false });
    expect(decide(['sh', '-c', 'rm -rf x; $CMD'])).toMatchObject({ action: 'deny', snapshot: false });
  });

  it('is stricter than allow: an override on an agent sandbox keeps it under default allow and drops it under default ask', () => {
    const base = PolicySchema.parse({
      ...minimalPolicy(),
      sandboxes: { '*': { commands: { rules: [{ command: 'make', action: 'snapshot-then-allow' }] } } },
    });
    expect(decideCommand(effectivePolicy(base, 'x', 'agent').commands, ['make'])).toMatchObject({ snapshot: true });
    const asking = PolicySchema.parse({
      ...minimalPolicy('ask'),
      sandboxes: { '*': { commands: { rules: [{ command: 'make', action: 'snapshot-then-allow' }] } } },
    });
    // An agent's sandbox takes only what tightens: under default ask, a snapshot-then-allow rule would loosen.
    expect(decideCommand(effectivePolicy(asking, 'x', 'agent').commands, ['make']).action).toBe('ask');
  });

  it('the policy file takes the action and a snapshots section, off by default', () => {
    const p = PolicySchema.parse(minimalPolicy());
    expect(p.snapshots).toEqual({ onRunStart: false, keepAutomatic: 8 });
    expect(() => PolicySchema.parse({ ...minimalPolicy(), snapshots: { onRunStart: 'yes' } })).toThrow();
    expect(() => PolicySchema.parse({ ...minimalPolicy(), snapshots: { keepAutomatic: 0 } })).toThrow();
    expect(() => CommandRuleSchema.parse({ command: 'rm', action: 'snapshot-then-deny' })).toThrow();
  });
});

function minimalPolicy(def: 'allow' | 'ask' = 'allow') {
  return {
    version: 1,
    commands: { default: def, dynamic: 'deny', rules: [] },
    paths: [],
    network: { allowed: ['none'], default: 'none' },
    create: { images: [], runtimes: [], maxMemoryBytes: 1, maxCpus: 1, maxPids: 1, maxTtlSeconds: 1, maxSandboxes: 1 },
    budgets: {
      wallTimeMs: 1,
      maxCalls: 1,
      execTimeoutMs: 1,
      maxExecTimeoutMs: 1,
      outputBytes: 1,
      breaker: { failures: 1, cooldownMs: 0 },
    },
    approvals: { timeoutMs: 1 },
    files: { maxReadBytes: 1, maxWriteBytes: 1 },
    access: 'own',
  };
}
