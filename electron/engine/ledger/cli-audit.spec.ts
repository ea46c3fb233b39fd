// `warden audit …` end to end, in process: the commands as registered on a commander program.
// (Lives beside the ledger because it tests the ledger's CLI contract: JSON shape and exit codes.)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAudit } from '../../cli/commands/audit.js';
import { sampleEntry, tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';
import { runCliInProcess, type CliAnswer } from '../../test-support/cli-in-process.js';

let t: TempLedger;
const savedHome = process.env.WARDEN_HOME;
beforeAll(() => {
  t = tempLedger();
  process.env.WARDEN_HOME = t.dir; // ledger.db and keys/ under it, as the CLI expects
  const l = t.open();
  l.appendBatch(Array.from({ length: 25 }, (_, i) => sampleEntry(i)));
  l.close();
});
afterAll(() => {
  if (savedHome === undefined) delete process.env.WARDEN_HOME;
  else process.env.WARDEN_HOME = savedHome;
  t.cleanup();
});

function warden(...args: string[]): Promise<CliAnswer> {
  return runCliInProcess([registerAudit], args);
}

describe('warden audit', () => {
  it('verify --json prints exactly { ok, entries, firstBad, checkpoint } and exits 0', async () => {
    const r = await warden('audit', 'verify', '--json');
    expect(r.code).toBe(0);
    const v = JSON.parse(r.out) as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['ok', 'entries', 'firstBad', 'checkpoint']);
    expect(v).toMatchObject({ ok: true, entries: 25, firstBad: null, checkpoint: { size: 25, source: 'file' } });
  });

  it('export writes the bundle and the HTML report, and verify --report checks it offline', async () => {
    const out = join(t.dir, 'bundle.json');
    const html = join(t.dir, 'report.html');
    const r = await warden('audit', 'export', '--out', out, '--html', html, '--sandbox', 'sb-alpha', '--from', '2', '--to', '20');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^wrote .*bundle\.json: 4 entries/);
    expect(readFileSync(html, 'utf8')).toContain('Warden audit report');
    const v = await warden('audit', 'verify', '--report', out, '--json');
    expect(v.code).toBe(0);
    expect(JSON.parse(v.out)).toMatchObject({ ok: true, entries: 4, firstBad: null });
  });

  it('names the first bad entry and exits 1 when the ledger was tampered with', async () => {
    const copy = join(t.dir, 'tampered.db');
    execFileSync('sqlite3', [t.file, `VACUUM INTO '${copy}'`]);
    execFileSync('sqlite3', [copy, "DROP TRIGGER entries_no_update; UPDATE entries SET kind = 'exec.startec' WHERE seq = 7;"]);
    execFileSync('cp', [`${t.file}.checkpoint`, `${copy}.checkpoint`]);
    const human = await warden('audit', 'verify', '--ledger', copy);
    expect(human.code).toBe(1);
    expect(human.out).toMatch(/FAILED: .*first bad entry 7: hash mismatch/);
    const json = await warden('audit', 'verify', '--ledger', copy, '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toMatchObject({ ok: false, entries: 25, firstBad: { seq: 7, reason: 'hash mismatch' } });
  });

  it('reports bad input and a missing ledger as one clear line with their exit codes', async () => {
    const bad = await warden('audit', 'export', '--out', join(t.dir, 'x.json'), '--from', 'abc');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--from must be a positive entry number/);
    const missing = await warden('audit', 'verify', '--ledger', join(t.dir, 'nope.db'));
    expect(missing.code).toBe(4);
    expect(missing.err).toMatch(/no ledger at/);
    expect(existsSync(join(t.dir, 'nope.db'))).toBe(false);
  });

  it('export --samples draws them on the report, and refuses samples that are not samples', async () => {
    const samples = join(t.dir, 'samples.json');
    const html = join(t.dir, 'with-samples.html');
    const t0 = Date.now() - 60_000;
    writeFileSync(
      samples,
      JSON.stringify([0, 1, 2].map((i) => ({ t: t0 + i * 1000, cpuPct: 5, memBytes: 1e6, memLimit: 0, netRx: i, netTx: i, pids: 2 }))),
    );
    const ok = await warden('audit', 'export', '--out', join(t.dir, 's.json'), '--html', html, '--samples', samples);
    expect(ok.code, ok.err).toBe(0);
    expect(readFileSync(html, 'utf8')).toContain('3 readings');
    writeFileSync(samples, JSON.stringify([{ t: 'yesterday', cpuPct: 5 }]));
    const bad = await warden('audit', 'export', '--out', join(t.dir, 's.json'), '--html', html, '--samples', samples);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--samples .*samples\.json.*\bt\b/);
    const noHtml = await warden('audit', 'export', '--out', join(t.dir, 's.json'), '--samples', samples);
    expect(noHtml.err).toMatch(/--samples needs --html/);
  });

  it('checkpoint and log work against the default ledger', async () => {
    const cp = await warden('audit', 'checkpoint');
    expect(cp.out).toMatch(/^warden\.local\/ledger\/[0-9a-f]+\n25\n/);
    const log = await warden('audit', 'log', '--limit', '2', '--json');
    expect((JSON.parse(log.out) as unknown[]).length).toBe(2);
  });
});
