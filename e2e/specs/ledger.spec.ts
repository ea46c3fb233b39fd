// The ledger view against a real `warden serve`: what was done shows up, Verify passes on the real
// ledger and names the first bad entry on a tampered copy, and an exported report checks out offline.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test, expect } from '../fixtures/test.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';
import { startWardenServe, type WardenServe } from '../fixtures/warden-serve.js';
import { AppPage } from '../pages/app-page.js';
import { LedgerPage } from '../pages/ledger-page.js';

const root = resolve(import.meta.dirname, '../..');

/** The user's bearer token for the HTTP API (what `warden` CLI commands use against a running server). */
const userToken = (serve: WardenServe) => readFileSync(join(serve.home, 'user.token'), 'utf8').trim();

async function api(serve: WardenServe, method: string, path: string, body?: unknown): Promise<string> {
  const res = await fetch(`${serve.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${userToken(serve)}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.ok, `${method} ${path}: ${res.status} ${text}`).toBe(true);
  return text;
}

/** Something to audit: a sandbox made through the API and a command run in it. */
async function someActivity(serve: WardenServe, runId: string, suffix: string): Promise<string> {
  const name = `${runId}-${suffix}`;
  await api(serve, 'POST', '/v1/sandboxes', { name, labels: { [TEST_LABEL_KEY]: runId } });
  await api(serve, 'POST', `/v1/sandboxes/${name}/exec`, { cmd: ['echo', `hello from ${suffix}`] });
  return name;
}

function sqlite(file: string, ...args: string[]): string {
  return execFileSync('sqlite3', ['-bail', file, ...args], { encoding: 'utf8' });
}

/**
 * A copy of a live home's ledger, tampered as an attacker with file access would: the append-only
 * triggers dropped with the sqlite3 CLI, then one byte of one middle entry's payload changed.
 * Returns the copy's home and the seq of the entry changed.
 */
function tamperedCopy(home: string): { dir: string; seq: number } {
  const dir = mkdtempSync(join(tmpdir(), 'warden-e2e-tampered-'));
  try {
    return { dir, seq: tamper(home, dir) };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

function tamper(home: string, dir: string): number {
  // The checkpoint file (if one was signed yet) before the database, so the copy holds every entry it vouches for.
  if (existsSync(join(home, 'ledger.db.checkpoint'))) copyFileSync(join(home, 'ledger.db.checkpoint'), join(dir, 'ledger.db.checkpoint'));
  cpSync(join(home, 'keys'), join(dir, 'keys'), { recursive: true });
  if (existsSync(join(home, 'blobs'))) cpSync(join(home, 'blobs'), join(dir, 'blobs'), { recursive: true });
  // A consistent snapshot of a database in use (WAL included), as `.backup` takes it.
  sqlite(join(home, 'ledger.db'), `.backup '${join(dir, 'ledger.db')}'`);
  const db = join(dir, 'ledger.db');
  const size = Number(sqlite(db, 'SELECT MAX(seq) FROM entries;').trim());
  expect(size).toBeGreaterThanOrEqual(3);
  const triggers = sqlite(db, "SELECT name FROM sqlite_master WHERE type = 'trigger';").trim().split('\n').filter(Boolean);
  expect(triggers.length).toBeGreaterThan(0);
  sqlite(db, triggers.map((t) => `DROP TRIGGER ${t};`).join(' '));
  // One byte of a middle entry's payload, where it keeps the payload valid JSON (a letter starting a
  // string value, or a digit): the middle entry itself, or the nearest one that has such a byte.
  const rows = JSON.parse(sqlite(db, '-json', 'SELECT seq, payload FROM entries ORDER BY seq;')) as Array<{ seq: number; payload: string }>;
  const middle = Math.ceil(size / 2);
  const changeable = /(?:":"|\[")[a-z]|":[0-9]/;
  const pick = rows.filter((r) => changeable.test(r.payload)).sort((a, b) => Math.abs(a.seq - middle) - Math.abs(b.seq - middle))[0];
  expect(pick, 'an entry with a byte to change').toBeDefined();
  const { seq, payload } = pick!;
  const m = changeable.exec(payload)!;
  const at = m.index + m[0].length - 1;
  const c = payload[at]!;
  const other = /[0-9]/.test(c) ? (c === '9' ? '8' : String(Number(c) + 1)) : c === 'a' ? 'b' : 'a';
  const changed = payload.slice(0, at) + other + payload.slice(at + 1);
  sqlite(db, `UPDATE entries SET payload = '${changed.replace(/'/g, "''")}' WHERE seq = ${seq};`);
  expect(sqlite(db, `SELECT payload FROM entries WHERE seq = ${seq};`).trim()).toBe(changed);
  return seq;
}

test.describe('ledger view', () => {
  test('lists what was done, opens an entry, filters, and verifies with count and key', async ({ app, serve }) => {
    const ledger = new LedgerPage(app.page);
    // A sandbox made from the UI, and a command run in it through the API.
    const name = app.sandboxes.name('ledger');
    await app.sandboxes.create({ name });
    await api(serve, 'POST', `/v1/sandboxes/${name}/exec`, { cmd: ['echo', 'hello ledger'] });

    await ledger.open();
    // Newest first: the exec's entries on top, the sandbox's creation below them.
    const finished = ledger.rowsOfKind('exec.finished').first();
    await expect(finished).toContainText('echo hello ledger');
    await expect(ledger.rowsOfKind('sandbox.created').first()).toContainText(name);
    const seqs = await ledger.rows.evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-seq'))));
    expect(seqs.length).toBeGreaterThanOrEqual(4);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(seqs[0]).toBe(await ledger.entryCount());

    // An entry's details: the full payload (as text), its hash and the previous one.
    const seq = Number(await finished.getAttribute('data-seq'));
    await finished.click();
    const details = ledger.details(seq);
    await expect(details.getByTestId('ledger-payload')).toContainText('"stdoutPreview": "hello ledger\\n"');
    await expect(details.getByTestId('ledger-hash')).toHaveText(/^[0-9a-f]{64}$/);
    await expect(details).toContainText('Prev hash');

    // Filters: one kind, then one run (the exec's), then none.
    await ledger.filter('kind', 'exec.finished');
    await expect(ledger.rows.first()).toHaveAttribute('data-kind', 'exec.finished');
    await expect(ledger.rows.and(ledger.page.locator(':not([data-kind="exec.finished"])'))).toHaveCount(0);
    await ledger.clearFilters();
    await expect(ledger.rowsOfKind('sandbox.created').first()).toBeVisible();

    // Live: an entry appended by this server appears on top without a reload.
    await api(serve, 'POST', `/v1/sandboxes/${name}/exec`, { cmd: ['echo', 'live entry'] });
    const live = ledger.rows.first();
    await expect(live).toContainText('echo live entry');
    await expect(live).toHaveAttribute('data-kind', 'exec.finished');
    await expect(ledger.size).toHaveText((await live.getAttribute('data-seq'))!);

    await ledger.verify();
    await expect(ledger.result).toHaveAttribute('data-ok', 'true');
    const count = await ledger.entryCount();
    await expect(ledger.result).toContainText(`Verified: ${count.toLocaleString('en-US')} entries intact`);
    const fingerprint = await ledger.result.getByTestId('verify-fingerprint').getAttribute('title');
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    await expect(ledger.key).toHaveAttribute('title', new RegExp(fingerprint!));
    await app.page.mouse.move(0, 0);
    await app.screenshot('ledger-verified');
  });

  test('a tampered copy: Verify names the first bad entry and shows it highlighted', async ({
    app,
    serve,
    podmanService,
    runId,
    browser,
  }) => {
    await someActivity(serve, runId, 'tamper');
    const { dir, seq } = tamperedCopy(serve.home);
    const copy = await startWardenServe(podmanService.url, { home: dir });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      const other = new AppPage(page, copy, runId);
      await other.signIn();
      const ledger = new LedgerPage(page);
      await ledger.open();
      await ledger.verify();
      await expect(ledger.result).toHaveAttribute('data-ok', 'false');
      await expect(ledger.result).toHaveAttribute('data-first-bad', String(seq));
      await expect(ledger.result).toHaveAttribute('data-reason', 'hash mismatch');
      await expect(ledger.result).toContainText(`failed at entry #${seq}: hash mismatch`);
      const bad = ledger.row(seq);
      await expect(bad).toHaveAttribute('data-bad', 'true');
      await expect(bad).toBeInViewport();
      await expect(ledger.page.locator('[data-testid="ledger-row"][data-bad]')).toHaveCount(1);
      await expect(ledger.details(seq)).toBeVisible();
      await page.mouse.move(0, 0);
      await other.screenshot('ledger-tampered');
    } finally {
      await page.close();
      await copy.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    void app; // signed in to the first server; its teardown sweeps this test's sandboxes
  });

  test('an exported report verifies offline with the CLI, and its HTML says so', async ({ app, serve, runId }, testInfo) => {
    const sandbox = await someActivity(serve, runId, 'export');
    const ledger = new LedgerPage(app.page);
    await ledger.open();
    const { json, html } = await ledger.exportReport();
    const jsonFile = testInfo.outputPath(json.suggestedFilename());
    const htmlFile = testInfo.outputPath(html.suggestedFilename());
    await json.saveAs(jsonFile);
    await html.saveAs(htmlFile);
    await expect(ledger.exportResult).toContainText(json.suggestedFilename());
    await expect(ledger.exportResult).toContainText('downloads folder');

    const cli = spawnSync(process.execPath, [join(root, 'bin/warden.mjs'), 'audit', 'verify', '--report', jsonFile, '--json'], {
      cwd: root,
      env: { ...process.env, WARDEN_HOME: serve.home, NO_COLOR: '1' },
      encoding: 'utf8',
    });
    expect(cli.status, cli.stderr).toBe(0);
    const verdict = JSON.parse(cli.stdout) as { ok: boolean; entries: number };
    expect(verdict.ok).toBe(true);
    const bundle = JSON.parse(readFileSync(jsonFile, 'utf8')) as {
      entries: unknown[];
      publicKey: { spkiPem: string };
      verification: { ok: boolean; entries: number };
    };
    expect(bundle.verification.ok).toBe(true);
    expect(bundle.entries.length).toBeGreaterThanOrEqual(3);
    // The key the view shows is the bundle's key.
    const fingerprint = createHash('sha256').update(bundle.publicKey.spkiPem).digest('hex');
    await expect(ledger.key).toHaveAttribute('title', new RegExp(fingerprint));

    // The HTML report opens and carries the verification result.
    const report = await app.page.context().newPage();
    await report.goto(`file://${htmlFile}`);
    await expect(report.locator('body')).toContainText(`Verified: ${bundle.entries.length} entries`); // the bundle, offline
    await expect(report.locator('body')).toContainText(`Verified: ${bundle.verification.entries} entries`); // the whole ledger at export
    await report.close();

    // A report for one sandbox only.
    const id = JSON.parse(await api(serve, 'GET', `/v1/sandboxes/${sandbox}`)).result.id as string;
    const scoped = await ledger.exportReport({ sandbox });
    const scopedFile = testInfo.outputPath(`scoped-${scoped.json.suggestedFilename()}`);
    await scoped.json.saveAs(scopedFile);
    const scopedBundle = JSON.parse(readFileSync(scopedFile, 'utf8')) as {
      selection: { sandboxId: string };
      entries: Array<{ sandboxId: string }>;
    };
    expect(scopedBundle.selection.sandboxId).toBe(id);
    expect(scopedBundle.entries.length).toBeGreaterThanOrEqual(2);
    expect(scopedBundle.entries.every((e) => e.sandboxId === id)).toBe(true);
    await expect(ledger.exportResult).toContainText(`of sandbox ${sandbox}`);
  });
});
