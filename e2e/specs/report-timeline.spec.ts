// The exported HTML report's timeline, read as an auditor would: a report of one sandbox from a real
// `warden serve` (exported with `warden audit export --html --samples`), opened from file:// in
// Chromium with the network cut off. Its DOM holds one linked item per entry of the bundle, on the
// right lane, and the resource charts; clicking an item lands on the entry's row; nothing is fetched.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test, expect } from '../fixtures/test.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';

const root = resolve(import.meta.dirname, '../..');
const SCREENSHOTS = resolve(import.meta.dirname, '../screenshots');

test('the report of a sandbox carries its timeline, readable offline', async ({ app, serve, runId, browser }, testInfo) => {
  const token = readFileSync(join(serve.home, 'user.token'), 'utf8').trim();
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${serve.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.ok, `${path}: ${res.status}`).toBe(true);
  };
  const started = Date.now();
  const name = `${runId}-report`;
  await post('/v1/sandboxes', { name, labels: { [TEST_LABEL_KEY]: runId } });
  await post(`/v1/sandboxes/${name}/exec`, { cmd: ['sh', '-c', 'echo "<b>not markup</b>"'] });
  await post(`/v1/sandboxes/${name}/exec`, { cmd: ['false'] });
  await post(`/v1/sandboxes/${name}/exec`, { cmd: ['sh', '-c', 'seq 1 3'] });
  // Resource samples as the control panel's history holds them: 1 Hz over the activity and a little after.
  const samples = Array.from({ length: Math.ceil((Date.now() - started) / 1000) + 8 }, (_, i) => ({
    t: started - 3000 + i * 1000,
    cpuPct: [3, 40, 95, 12, 60][i % 5]!,
    memBytes: (24 + ((i * 7) % 30)) * 1024 * 1024,
    memLimit: 256 * 1024 * 1024,
    netRx: i * 1500,
    netTx: i * 400,
    pids: 2 + (i % 4),
  }));
  const samplesFile = testInfo.outputPath('samples.json');
  const bundleFile = testInfo.outputPath('bundle.json');
  const htmlFile = testInfo.outputPath('report.html');
  writeFileSync(samplesFile, JSON.stringify(samples));
  const cli = spawnSync(
    process.execPath,
    [
      join(root, 'bin/warden.mjs'),
      'audit',
      'export',
      '--out',
      bundleFile,
      '--html',
      htmlFile,
      '--sandbox',
      name,
      '--samples',
      samplesFile,
      '--json',
    ],
    { cwd: root, env: { ...process.env, WARDEN_HOME: serve.home, NO_COLOR: '1' }, encoding: 'utf8' },
  );
  expect(cli.status, cli.stderr).toBe(0);
  const bundle = JSON.parse(readFileSync(bundleFile, 'utf8')) as { entries: Array<{ seq: number; kind: string }> };
  expect(bundle.entries.length).toBeGreaterThanOrEqual(8);

  // Offline: no network at all, and any request that is not the file itself is refused and noted.
  const context = await browser.newContext({ offline: true, viewport: { width: 1280, height: 800 } });
  const fetched: string[] = [];
  const problems: string[] = [];
  await context.route(/^(?!file:)/, (route) => {
    fetched.push(route.request().url());
    return route.abort();
  });
  const page = await context.newPage();
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  try {
    await page.goto(`file://${htmlFile}`);
    const timeline = page.locator('section.timeline');
    await expect(timeline.locator('h2')).toHaveText('Timeline');

    // The DOM, parsed by the browser: one item per entry, naming its seq, linking to its row.
    const items = await timeline.locator('svg a.item').evaluateAll((as) =>
      as.map((a) => ({
        seq: Number(a.getAttribute('data-seq')),
        href: a.getAttribute('href'),
        lane: a.getAttribute('data-lane'),
        label: a.getAttribute('aria-label') ?? '',
        title: a.querySelector('title')?.textContent ?? '',
      })),
    );
    expect(items.map((i) => i.seq).sort((a, b) => a - b)).toEqual(bundle.entries.map((e) => e.seq));
    for (const e of bundle.entries) {
      const item = items.find((i) => i.seq === e.seq)!;
      expect(item.href).toBe(`#e-${e.seq}`);
      expect(item.label.startsWith(`#${e.seq} ${e.kind} `), item.label).toBe(true);
      expect(item.title).toBe(item.label);
      await expect(page.locator(`tr[id="e-${e.seq}"]`)).toHaveCount(1);
    }
    const lanes = new Set(items.map((i) => i.lane));
    expect([...lanes].sort()).toEqual(expect.arrayContaining(['calls', 'engine']));
    expect(items.filter((i) => i.lane === 'calls').length).toBeGreaterThanOrEqual(6); // 3 decisions + 3 execs (+ their starts)
    await expect(timeline.locator('svg a.item .m.fail')).not.toHaveCount(0); // `false` exited 1
    for (const chart of ['cpu', 'mem', 'rx', 'pids'])
      await expect(timeline.locator(`[data-chart="${chart}"] polyline`).first()).toBeAttached();
    await expect(timeline).toContainText(`${samples.length} readings`);
    // Sandbox text is text: the echo's <b> is in a title, not an element.
    expect(await page.locator('section.timeline b').count()).toBe(0);

    // An item leads to its row.
    const target = bundle.entries.find((e) => e.kind === 'exec.finished')!;
    await timeline.locator(`a.item[data-seq="${target.seq}"] .m`).click();
    expect(new URL(page.url()).hash).toBe(`#e-${target.seq}`);
    await expect(page.locator(`tr[id="e-${target.seq}"]`)).toBeInViewport();

    await timeline.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await page.screenshot({ path: resolve(SCREENSHOTS, 'report-timeline.png') });
    expect(fetched, 'requests a file:// report made').toEqual([]);
    expect(problems, 'console errors (CSP violations among them)').toEqual([]);
  } finally {
    await context.close();
  }
  void app; // its teardown sweeps this test's sandboxes
});
