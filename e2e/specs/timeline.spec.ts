// One timeline of what happened: an agent script drives a run while the Runs view's Timeline tab
// draws its calls on the same time axis as the sandbox's resources; an item opens its ledger entry;
// the history comes back after a page reload (it is the server's, not the page's); the sandbox's
// detail shows its whole life the same way. Screenshots at 1280×800 and 1024×640.
import type { Locator, Page } from '@playwright/test';
import { test, expect } from '../fixtures/test.js';
import { HttpAgent } from '../fixtures/agent.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';
import { RunsPage } from '../pages/runs-page.js';
import { LedgerPage } from '../pages/ledger-page.js';

const seconds = (clock: string) => {
  const [h, m, s] = clock.split(':').map(Number);
  return h! * 3600 + m! * 60 + s!;
};

async function openRunTimeline(page: Page, runs: RunsPage, agent: string): Promise<Locator> {
  await runs.open();
  await runs.select(agent);
  await page.getByTestId('run-tab-timeline').click();
  const tl = page.getByTestId('run-timeline');
  await expect(tl.getByTestId('tl-status')).toHaveAttribute('data-loading', 'false');
  return tl;
}

const points = async (tl: Locator) => Number((await tl.getByTestId('tl-points').getAttribute('data-points')) ?? 0);

/**
 * From the timeline's first item (the run's create) to its second call, by the keyboard. The
 * sandbox's attestation is an engine event of its own: on a busy host it lands after the create
 * returned and before the next call started, so the item after the create may be it.
 */
async function toSecondCall(page: Page, announce: Locator): Promise<void> {
  await page.keyboard.press('Home');
  await expect(announce).toContainText('#1 sandbox.create');
  await page.keyboard.press('ArrowRight');
  await expect(announce).not.toContainText('#1 sandbox.create');
  if (!(await announce.textContent())!.includes('#2 exec')) {
    await expect(announce).toContainText('sandbox.attested');
    await page.keyboard.press('ArrowRight');
  }
  await expect(announce).toContainText('#2 exec');
}

test('a run’s timeline: calls aligned with resources, linked to the ledger, kept across a reload', async ({ app, serve, runId }) => {
  const page = app.page;
  const runs = new RunsPage(page);
  const ledger = new LedgerPage(page);
  const agent = HttpAgent.create(serve, `${runId}-timeline-agent`);
  const box = await agent.createSandbox({ name: `${runId}-timeline-box`, labels: { [TEST_LABEL_KEY]: runId } });
  // Work that shows: a busy loop (CPU), a file, a failure.
  await agent.exec(box.id, ['sh', '-c', 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo busy done']);
  await agent.writeFile(box.id, 'notes/timeline.txt', 'hello\n');
  await agent.exec(box.id, ['sh', '-c', 'echo oops >&2; exit 2']);

  let tl = await openRunTimeline(page, runs, agent.name);
  await expect(tl.getByTestId('tl-status')).toHaveAttribute('data-items', /^([4-9]|\d\d+)$/);
  // The history is recorded by the server from the sandbox's start: points arrive at 1 Hz.
  await expect.poll(() => points(tl), { timeout: 60_000 }).toBeGreaterThanOrEqual(3);

  // The first item is the run's first call: its place on the axis is its start time.
  const body = tl.getByTestId('tl-body');
  await body.focus();
  await toSecondCall(page, tl.getByTestId('tl-announce'));
  const seq = Number(await body.getAttribute('data-selected-seq'));
  expect(seq).toBeGreaterThan(0);
  const x = Number(await body.getAttribute('data-selected-x'));
  const box2 = (await body.boundingBox())!;
  const lanes = (await tl.getByTestId('tl-lanes').boundingBox())!;
  // Hover the calls lane exactly there: the tooltip names the call and the time it started.
  await page.mouse.move(box2.x + x + 1, lanes.y + 11);
  const tip = tl.getByTestId('tl-tip');
  await expect(tip).toBeVisible();
  await expect(tip.locator('.tl-tip-hit')).toContainText('#2 exec');
  await expect(tip.locator('.tl-tip-cost')).toContainText(/CPU .*memory .* of .*processes|no resource sample/);
  const tipClock = (await tip.locator('.tl-tip-time').textContent())!;
  await page.getByTestId('run-tab-calls').click();
  const callClock = (await runs.call(2).locator('.call-foot span').first().textContent())!;
  expect(Math.abs(seconds(tipClock) - seconds(callClock)), `tooltip ${tipClock} vs call ${callClock}`).toBeLessThanOrEqual(1);

  // Over the graphs, the same moment says what the sandbox used then.
  tl = await openRunTimeline(page, runs, agent.name);
  const cpu = (await tl.getByTestId('tl-chart-cpu').boundingBox())!;
  await page.mouse.move(cpu.x + cpu.width - 30, cpu.y + cpu.height / 2);
  await expect(tl.getByTestId('tl-tip').locator('.tl-tip-cost')).toContainText('CPU');
  await app.screenshot('timeline/run-1280x800');

  // A click on the item opens the Ledger at its entry.
  await tl.getByTestId('tl-body').focus();
  await toSecondCall(page, tl.getByTestId('tl-announce'));
  await page.keyboard.press('Enter');
  await expect(ledger.details(seq)).toBeVisible();
  await expect(ledger.row(seq)).toBeVisible();

  // A reload: the page starts empty; the timeline's history comes from the server.
  tl = await openRunTimeline(page, runs, agent.name);
  await expect.poll(() => points(tl), { timeout: 60_000 }).toBeGreaterThanOrEqual(5);
  const before = await points(tl);
  await page.reload();
  tl = await openRunTimeline(page, runs, agent.name);
  await expect.poll(() => points(tl)).toBeGreaterThanOrEqual(before);
  await expect(tl.getByTestId('tl-status')).toHaveAttribute('data-items', /^([4-9]|\d\d+)$/);

  // Zoom and pan with the toolbar and the keys; the window moves.
  const min0 = Number(await tl.getByTestId('tl-body').getAttribute('data-min'));
  await tl.getByRole('button', { name: 'Zoom in' }).click();
  await tl.getByTestId('tl-body').focus();
  await page.keyboard.press('Shift+ArrowLeft');
  await expect.poll(async () => Number(await tl.getByTestId('tl-body').getAttribute('data-min'))).not.toBe(min0);

  await page.setViewportSize({ width: 1024, height: 640 });
  await tl.getByTestId('tl-fit').click();
  const lanes2 = (await tl.getByTestId('tl-lanes').boundingBox())!;
  await page.mouse.move(lanes2.x + lanes2.width * 0.5, lanes2.y + 11);
  await app.screenshot('timeline/run-1024x640');

  // The sandbox's own timeline, in its detail: its whole life, the run's calls among its items.
  await page.setViewportSize({ width: 1280, height: 800 });
  await app.go('sandboxes');
  await app.sandboxes.open(box.name);
  const life = page.getByTestId('sandbox-timeline');
  await life.scrollIntoViewIfNeeded();
  await expect(life.getByTestId('tl-status')).toHaveAttribute('data-loading', 'false');
  await expect(life.getByTestId('tl-status')).toHaveAttribute('data-items', /^([4-9]|\d\d+)$/);
  await expect.poll(() => points(life)).toBeGreaterThanOrEqual(before);
  const lifeLanes = (await life.getByTestId('tl-lanes').boundingBox())!;
  await page.mouse.move(lifeLanes.x + lifeLanes.width * 0.6, lifeLanes.y + 11);
  await app.screenshot('timeline/sandbox-1280x800');
  await page.setViewportSize({ width: 1024, height: 640 });
  await life.scrollIntoViewIfNeeded();
  await app.screenshot('timeline/sandbox-1024x640');
});
