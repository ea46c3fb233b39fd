// What a person approves is what runs: "approve for the rest of the run" covers exactly the programs
// the prompt listed (with their arguments where the asking rule names arguments); any other program
// that needs approval still asks, and the prompt shows the whole command, never cut.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { ApprovalDecision, ApprovalInfo } from '../../../shared/types/run.js';
import type { Policy } from '../../../shared/types/policy.js';
import { EventBus } from '../event-bus.js';
import { Approvals } from './approvals.js';
import { execVerdict } from './approval-scope.js';
import { ContextAuditSink } from './audit-context.js';
import { CallRunner } from './call-runner.js';
import { defaultPolicyPath, effectivePolicy, parsePolicy } from './policy-load.js';
import { RunStore } from './runs.js';

function setup() {
  const policy: Policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
  policy.commands.rules.push({ command: ['whoami', 'uname'], action: 'ask' });
  const events = new EventBus();
  const runs = new RunStore(events);
  const approvals = new Approvals(events);
  const runner = new CallRunner(runs, approvals, new ContextAuditSink({ append: () => undefined }));
  const run = runs.open('ann', 'task', { id: 'c'.repeat(64), name: 'box' }, () => policy.budgets);
  const asked: ApprovalInfo[] = [];
  let answer: ApprovalDecision = 'approve-run';
  events.on('approval.requested', (a) => {
    asked.push(a);
    queueMicrotask(() => approvals.decide(a.id, answer, 'user'));
  });
  /** Runs argv through the runner as the gateway does; says whether a person was asked. */
  const exec = async (argv: string[], stdin?: string): Promise<'asked' | 'not asked'> => {
    const before = asked.length;
    await runner.call({
      ctx: { agent: 'ann', runKey: 'task' },
      run,
      sandboxId: 'c'.repeat(64),
      tool: 'exec',
      args: { argv },
      policy: effectivePolicy(policy, 'box'),
      verdict: () => execVerdict(policy.commands, argv, stdin),
      body: async () => undefined,
      settle: () => true,
    });
    return asked.length > before ? 'asked' : 'not asked';
  };
  return { exec, asked, setAnswer: (d: ApprovalDecision) => (answer = d), close: () => approvals.close() };
}

describe('approve for the rest of the run', () => {
  it('covers the programs the person saw, not another program that also needs approval', async () => {
    const s = setup();
    expect(await s.exec(['whoami'])).toBe('asked');
    expect(await s.exec(['whoami'])).toBe('not asked');
    expect(await s.exec(['sh', '-c', 'whoami; uname -a'])).toBe('asked');
    expect(s.asked.at(-1)!.programs).toEqual(['whoami  (rule: ask whoami|uname)', 'uname -a  (rule: ask whoami|uname)']);
    // both were approved for the run now
    expect(await s.exec(['sh', '-c', 'uname -a && whoami'])).toBe('not asked');
    s.close();
  });

  it('covers the arguments too where the asking rule names arguments', async () => {
    const s = setup();
    expect(await s.exec(['git', 'push', 'origin', 'main'])).toBe('asked');
    expect(await s.exec(['git', 'push', 'origin', 'main'])).toBe('not asked');
    expect(await s.exec(['git', 'push', '--force', 'origin', 'main'])).toBe('asked');
    expect(await s.exec(['git', 'status'])).toBe('not asked'); // no rule asks for it
    s.close();
  });

  it('approve once covers nothing later', async () => {
    const s = setup();
    s.setAnswer('approve-once');
    expect(await s.exec(['whoami'])).toBe('asked');
    expect(await s.exec(['whoami'])).toBe('asked');
    s.close();
  });
});

describe('the prompt', () => {
  it('shows the whole command, quoted as it runs, with stdin, and every program that needs approval', async () => {
    const s = setup();
    const long = `echo ${'x'.repeat(400)}; whoami`;
    await s.exec(['bash', '-c', long]);
    const a = s.asked.at(-1)!;
    expect(a.summary).toBe(`exec bash -c '${long}'`);
    expect(a.programs).toEqual(['whoami  (rule: ask whoami|uname)']);
    await s.exec(['sh', '-s'], 'uname\n');
    expect(s.asked.at(-1)!.summary).toBe('exec sh -s\n--- stdin (6 bytes) ---\nuname\n');
    s.close();
  });

  it('refuses a command that needs approval and is too long to show whole', () => {
    const { commands } = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
    expect(() => execVerdict(commands, ['sh', '-c', `git push; echo ${'y'.repeat(40_000)}`])).toThrow(/too long|more than the 32768/);
    // a long command that needs no approval is not refused for its length
    expect(execVerdict(commands, ['sh', '-c', `echo ${'y'.repeat(40_000)}`]).action).toBe('allow');
  });
});
