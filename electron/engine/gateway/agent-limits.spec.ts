// Per-agent limits with a clock the spec moves: a bucket refills with time, not with a new run key;
// execs at once are counted until released; an exec's allowance never grants more than the run and
// the agent have left, whoever asks.
import { describe, expect, it } from 'vitest';
import { AgentLimitsSchema } from '../../../shared/types/policy.js';
import { AgentLimits, AsyncMutex, TokenBucket } from './agent-limits.js';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('TokenBucket', () => {
  it('holds its capacity, refills evenly over the period, never above capacity', () => {
    const c = clock();
    const b = new TokenBucket(60, 60_000, c.now);
    expect(b.take(100)).toBe(60);
    expect(b.take(1)).toBe(0);
    c.advance(10_000);
    expect(b.take(100)).toBe(10);
    c.advance(10 * 60_000);
    expect(b.available()).toBe(60);
  });
});

describe('AgentLimits', () => {
  const limits = (over: Partial<ReturnType<typeof AgentLimitsSchema.parse>> = {}) => ({ ...AgentLimitsSchema.parse({}), ...over });

  it('calls per minute are per agent, whatever the run: the sixth call in a minute is refused, later ones come back', () => {
    const c = clock();
    const lim = new AgentLimits(() => limits({ callsPerMinute: 5 }), c.now);
    const got = Array.from({ length: 8 }, () => lim.admitCall('ann'));
    expect(got.filter((r) => r === null)).toHaveLength(5);
    expect(got[5]).toMatchObject({ source: 'agents.callsPerMinute' });
    expect(lim.admitCall('bob')).toBeNull(); // another agent has its own bucket
    c.advance(12_000);
    expect(lim.admitCall('ann')).toBeNull();
    expect(lim.admitCall('ann')).not.toBeNull();
  });

  it('execs at once: counted until released, a release counts once', () => {
    const lim = new AgentLimits(() => limits({ concurrentExecs: 2 }));
    const a = lim.admitExec('ann');
    const b = lim.admitExec('ann');
    expect(lim.admitExec('ann')).toMatchObject({ source: 'agents.concurrentExecs' });
    if ('release' in a) {
      a.release();
      a.release();
    }
    expect('release' in lim.admitExec('ann')).toBe(true);
    expect(lim.admitExec('ann')).toMatchObject({ source: 'agents.concurrentExecs' });
    expect(b).toHaveProperty('release');
  });

  it("an exec's allowance grants at most what the run and the agent's hour have left, chunk by chunk", () => {
    const c = clock();
    const lim = new AgentLimits(() => limits({ outputBytesPerHour: 1000 }), c.now);
    const run = (budget: number) => {
      let used = 0;
      return { left: () => budget - used, charge: (n: number) => (used += n), used: () => used };
    };
    const r1 = run(600);
    const two = [lim.allowance('ann', r1), lim.allowance('ann', r1)];
    // two execs of one run, interleaved: together they get the run's 600, no more
    let granted = 0;
    for (let i = 0; i < 10; i++) granted += two[i % 2]!.take(100);
    expect(granted).toBe(600);
    expect(r1.used()).toBe(600);
    // a fresh run (a new key) has its own budget, but the agent's hour has only 400 left
    const r2 = run(10_000);
    expect(lim.allowance('ann', r2).take(10_000)).toBe(400);
    expect(lim.outputLeft('ann')).toBe(0);
    c.advance(3_600_000);
    expect(lim.outputLeft('ann')).toBe(1000);
  });
});

describe('AsyncMutex', () => {
  it('runs bodies one at a time, in order, also after one fails', async () => {
    const m = new AsyncMutex();
    const log: string[] = [];
    let open!: () => void;
    const first = m.run(async () => {
      log.push('1 in');
      await new Promise<void>((r) => (open = r));
      log.push('1 out');
      throw new Error('boom');
    });
    const second = m.run(async () => {
      log.push('2 in');
      return 2;
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(log).toEqual(['1 in']);
    open();
    await expect(first).rejects.toThrow('boom');
    expect(await second).toBe(2);
    expect(log).toEqual(['1 in', '1 out', '2 in']);
  });
});
