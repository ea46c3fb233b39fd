// The door records a running sandbox's resources with no window open, and the history outlives the
// door (a restart): real Podman stats, a real SQLite file in the spec's home.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestWarden, openTestWarden, type TestWarden } from '../test-support/podman-fixture.js';
import { StatsHistoryStore } from '../engine/stats-history/history-store.js';
import { WardenError } from '../../shared/errors.js';
import type { EngineSource } from './engine-source.js';
import { StatsHub } from './stats-hub.js';

let w: TestWarden;
beforeAll(async () => {
  w = await openTestWarden();
}, 120_000);
afterAll(async () => closeTestWarden(w), 120_000);

/** Resolves once `n` samples of the sandbox have reached the engine's bus. */
function samples(id: string, n: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const off = w.engine.events.on('stats.sample', (s) => {
      if (s.sandboxId === id && ++seen >= n) {
        off();
        resolve();
      }
    });
  });
}

describe('StatsRecorder', () => {
  it('records a running sandbox without any window watching, and the file keeps it after the door closes', async () => {
    const sb = await w.t.create();
    const source: EngineSource = {
      current: () => w.engine,
      gateway: () => {
        throw new WardenError('E_NOT_FOUND', 'no gateway in this spec');
      },
      ledgerReader: () => w.warden.ledgerReader,
      on: (event, fn) => w.engine.events.on(event, fn),
    };
    const file = join(w.t.home, 'stats.db');
    const hub = new StatsHub(source, file);
    // No UiSession asked for stats: the recorder alone opened the stream.
    await samples(sb.id, 3);
    const h = hub.history({ sandboxId: sb.id });
    expect(h.time.length).toBeGreaterThanOrEqual(2);
    expect(h.memoryLimit.at(-1)).toBe(sb.limits.memoryBytes);
    expect(h.pids.at(-1)).toBeGreaterThanOrEqual(1);
    expect(h.step.every((s) => s === 1)).toBe(true);
    hub.close();

    // A restart: a new store on the same file has what was recorded.
    const again = StatsHistoryStore.open(file);
    try {
      expect(again.history(sb.id).time.length).toBeGreaterThanOrEqual(h.time.length);
      expect(again.history('f'.repeat(64)).time).toEqual([]);
    } finally {
      again.close();
    }
  }, 120_000);

  it('a door without a history file says so instead of answering empty', () => {
    const hub = new StatsHub({
      current: () => w.engine,
      gateway: () => {
        throw new WardenError('E_NOT_FOUND', 'none');
      },
      ledgerReader: () => w.warden.ledgerReader,
      on: (event, fn) => w.engine.events.on(event, fn),
    });
    expect(() => hub.history({ sandboxId: 'a'.repeat(64) })).toThrow(/keeps no resource history/);
    hub.close();
  });
});
