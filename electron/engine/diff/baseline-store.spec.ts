// A baseline's bytes come from a walker that runs in the sandbox, which the agent may replace: the
// store keeps the promised bounds (128 KiB a file, 16 MiB a baseline, 50,000 files) whatever it is sent.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BaselineStore, MAX_RUN_BASELINES } from './baseline-store.js';
import { DATA_MAX_BYTES, DATA_TOTAL_BYTES, MAX_FILES, type ManifestEntry } from './manifest.js';

const home = mkdtempSync(join(tmpdir(), 'warden-baseline-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const file = (path: string, data: Buffer): ManifestEntry => ({
  path,
  type: 'file',
  size: data.length,
  mode: 0o644,
  sha256: createHash('sha256').update(data).digest('hex'),
  data,
});

describe('baseline store against a lying walker', () => {
  it('keeps no file over 128 KiB, no more than 16 MiB a baseline, and lists at most 50,000 files', () => {
    const store = new BaselineStore(home);
    const big = file('big', Buffer.alloc(DATA_MAX_BYTES + 1, 1));
    const many = Array.from({ length: DATA_TOTAL_BYTES / DATA_MAX_BYTES + 8 }, (_, i) =>
      file(`f${i}`, Buffer.alloc(DATA_MAX_BYTES, i + 2)),
    );
    const names = Array.from({ length: MAX_FILES + 10 }, (_, i): ManifestEntry => ({ ...file(`n${i}`, Buffer.alloc(0)), data: undefined }));
    const saved = store.save('run', 'lying', 'sb', { files: [big, ...many, ...names], truncated: false });
    expect(store.bytes(big.sha256!)).toBeNull();
    const blobs = join(home, 'baselines', 'blobs');
    const kept = readdirSync(blobs).reduce((n, b) => n + statSync(join(blobs, b)).size, 0);
    expect(kept).toBeLessThanOrEqual(DATA_TOTAL_BYTES);
    expect(saved.files).toHaveLength(MAX_FILES);
    expect(saved.truncated).toBe(true);
  });
});

describe('baseline store against many run keys', () => {
  it("keeps a sandbox's newest run baselines only, and the bytes only they name", () => {
    const store = new BaselineStore(mkdtempSync(join(home, 'runs-')));
    const extra = 3;
    const runs = Array.from({ length: MAX_RUN_BASELINES + extra }, (_, i) => {
      const own = file(`own-${i}`, Buffer.from(`run ${i} only`));
      store.save('run', `r${i}`, 'sb', { files: [own], truncated: false }, new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString());
      return own;
    });
    store.save('run', 'other-sandbox-run', 'sb2', { files: [], truncated: false }, new Date(Date.UTC(2025, 0, 1)).toISOString());
    for (const [i, own] of runs.entries()) {
      const kept = i >= extra;
      expect(store.has('run', `r${i}`), `r${i}`).toBe(kept);
      expect(store.bytes(own.sha256!) !== null, `bytes of r${i}`).toBe(kept);
    }
    expect(store.has('run', 'other-sandbox-run')).toBe(true);
  });
});
