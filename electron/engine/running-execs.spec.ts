// Pausing a sandbox ends its running commands first, and lets none start until the pause is done.
import { describe, expect, it } from 'vitest';
import { RunningExecs } from './running-execs.js';

/** A command that runs until its signal fires, and answers why. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve(String(signal.reason)), { once: true }));

describe('RunningExecs', () => {
  it("ends the sandbox's commands (not another's) before the action, and refuses new ones during it", async () => {
    const r = new RunningExecs();
    const mine = r.run('a', undefined, untilAborted);
    const other = new AbortController();
    const theirs = r.run('b', other.signal, untilAborted);
    let during: unknown;
    const result = await r.closedDuring('a', 'the sandbox was paused', async () => {
      during = await r.run('a', undefined, async () => 'ran').catch((err: Error) => err.message);
      return 'paused';
    });
    expect(result).toBe('paused');
    expect(await mine).toBe('the sandbox was paused');
    expect(during).toBe('the command was not started: the sandbox was paused');
    // After the action, commands start again; the other sandbox's kept running until its own caller left.
    expect(await r.run('a', undefined, async () => 'ran')).toBe('ran');
    other.abort('client gone');
    expect(await theirs).toBe('client gone');
  });
});
