import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StatsHistoryStore, statsHistoryFile } from '../engine/stats-history/history-store.js';
import { keptSamples } from './report-history.js';

const dirs: string[] = [];
const home = () => {
  const d = mkdtempSync(join(tmpdir(), 'warden-report-history-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("an export's default samples: the history the control panel kept", () => {
  it('reads the exported sandbox’s history from stats.db beside the ledger, and only that sandbox’s', async () => {
    const dir = home();
    const id = 'c'.repeat(64);
    const store = StatsHistoryStore.open(statsHistoryFile(dir));
    const t0 = Date.now() - 10_000;
    const one = { memory: 1e6, memoryLimit: 2e6, rx: 5, tx: 1, pids: 2 };
    store.write([0, 1, 2].map((i) => ({ sandboxId: id, time: t0 + i * 1000, cpu: 10 * i, ...one })));
    store.write([{ sandboxId: 'd'.repeat(64), time: t0, cpu: 99, ...one }]);
    store.close();
    const samples = await keptSamples(join(dir, 'ledger.db'), id);
    expect(samples.map((s) => s.cpuPct)).toEqual([0, 10, 20]);
    expect(samples.at(-1)!.netRx).toBe(15);
  });

  it('gives none, and makes no file, for a home without history or a selection that is not one sandbox', async () => {
    const dir = home();
    expect(await keptSamples(join(dir, 'ledger.db'), 'c'.repeat(64))).toEqual([]);
    expect(existsSync(statsHistoryFile(dir))).toBe(false);
    expect(await keptSamples(join(dir, 'ledger.db'), null)).toEqual([]);
    expect(await keptSamples(join(dir, 'ledger.db'), '../../etc')).toEqual([]);
  });
});
