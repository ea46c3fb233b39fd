// Every view at four window sizes, from a laptop with a docked panel to a 1440p screen: a screenshot
// of each (e2e/screenshots/sizes/VIEW-WxH.png) and the geometry a person would notice without
// reading — header cells running together, text cut with no way to read it whole, a page wider than
// the window, sparklines shrunk to dots, the terminal pushed below the fold by the graphs.
import type { Page } from '@playwright/test';
import { test, expect } from '../fixtures/test.js';
import { HttpAgent } from '../fixtures/agent.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';
import { ASK_ARG_PREFIX } from '../fixtures/policy.js';
import { checkLayout } from '../fixtures/layout-check.js';
import type { AppPage } from '../pages/app-page.js';
import { RunsPage } from '../pages/runs-page.js';
import { LedgerPage } from '../pages/ledger-page.js';
import { ReviewPage } from '../pages/review-page.js';
import { ASK_PATH } from '../fixtures/policy.js';

const SIZES = [
  { width: 1024, height: 640 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
  { width: 2560, height: 1440 },
];

async function expectSound(app: AppPage, view: string, size: { width: number; height: number }): Promise<void> {
  const name = `sizes/${view}-${size.width}x${size.height}`;
  await app.screenshot(name);
  const problems = await checkLayout(app.page);
  expect.soft(problems.overlappingHeaders, `${name}: header cells overlap`).toEqual([]);
  expect.soft(problems.clippedWithoutTitle, `${name}: text cut without a title holding it whole`).toEqual([]);
  expect.soft(problems.controlsOffScreen, `${name}: controls cut off at the right edge`).toEqual([]);
  expect.soft(problems.horizontalOverflow, `${name}: the page scrolls sideways`).toBe(0);
}

async function escapeDialog(page: Page, testId: string): Promise<void> {
  await page.keyboard.press('Escape');
  await expect(page.getByTestId(testId)).toHaveCount(0);
}

test('every view at 1024×640, 1280×800, 1920×1080 and 2560×1440', async ({ app, serve, runId }) => {
  const page = app.page;
  const runs = new RunsPage(page);
  const ledger = new LedgerPage(page);
  // One sandbox an agent made and ran a command in: a run with calls and ledger entries behind it.
  const agent = HttpAgent.create(serve, `${runId}-sizes-agent`);
  const box = await agent.createSandbox({ name: `${runId}-sizes-box-with-a-longer-name`, labels: { [TEST_LABEL_KEY]: runId } });
  await agent.exec(box.id, ['sh', '-c', "echo sized; printf 'x = 1\\ny = 2\\n' > sized.py"]);
  const review = new ReviewPage(page);
  const row = app.sandboxes.row(box.name);
  await expect(row).toHaveAttribute('data-state', 'running');
  await expect(row.getByTestId('cpu-spark')).not.toHaveText('–', { timeout: 60_000 }); // the first stats sample

  for (const size of SIZES) {
    await page.setViewportSize(size);

    await app.go('sandboxes');
    await expect(row).toBeVisible();
    for (const spark of await row.locator('.spark-canvas').all()) {
      expect.soft((await spark.boundingBox())?.width ?? 0, 'a sparkline keeps a readable width').toBeGreaterThanOrEqual(40);
    }
    await expectSound(app, 'sandboxes', size);

    await page.getByRole('button', { name: 'New sandbox' }).click();
    await expect(app.sandboxes.dialog).toBeVisible();
    await expectSound(app, 'create-dialog', size);
    await escapeDialog(page, 'create-dialog');

    await row.getByRole('button', { name: `Destroy ${box.name}` }).click();
    await expect(app.sandboxes.destroyDialog).toBeVisible();
    await expectSound(app, 'destroy-dialog', size);
    await escapeDialog(page, 'destroy-dialog');

    await app.sandboxes.open(box.name);
    await expect(app.detail.terminalStatus).toHaveText('connected');
    // The terminal starts on screen: nobody scrolls past the graphs to reach it.
    const terminal = await page.getByTestId('terminal').boundingBox();
    expect(terminal, 'the terminal is shown').not.toBeNull();
    expect.soft(terminal!.y + 120, 'the terminal starts within the window').toBeLessThanOrEqual(size.height);
    await expectSound(app, 'detail', size);
    if (size === SIZES[0]) {
      // Folding the graph strip gives the terminal the room; unfolding brings the graphs back.
      await page.getByTestId('toggle-graphs').click();
      await expect(page.getByTestId('chart-cpu')).toBeHidden();
      expect((await page.getByTestId('terminal').boundingBox())!.y).toBeLessThan(terminal!.y);
      await page.getByTestId('toggle-graphs').click();
      await expect(page.getByTestId('chart-cpu')).toBeVisible();
      // One snapshot in the list for the rest of the sizes (removed at the end).
      await review.tab('snapshots');
      await review.take('sized');
    }
    await review.tab('changes');
    await expect(review.diff('sized.py')).toBeVisible();
    await expectSound(app, 'detail-changes', size);
    await page.getByTestId('sandbox-changes-layout-split').click();
    await expectSound(app, 'detail-changes-split', size);
    await page.getByTestId('sandbox-changes-layout-unified').click();
    await review.tab('snapshots');
    await expect(review.row('sized')).toBeVisible();
    await expectSound(app, 'detail-snapshots', size);
    await review.ask('reset', 'sized');
    await expectSound(app, 'snapshot-reset-dialog', size);
    await escapeDialog(page, 'snapshot-reset-dialog');
    await review.tab('shell');

    await runs.open();
    await runs.select(agent.name);
    await expect(runs.calls()).toHaveCount(2);
    await expectSound(app, 'runs', size);
    await page.getByTestId('run-tab-timeline').click();
    await expect(page.getByTestId('run-timeline').getByTestId('tl-status')).toHaveAttribute('data-loading', 'false');
    await expectSound(app, 'run-timeline', size);
    await page.getByTestId('run-tab-calls').click();

    await ledger.open();
    await expect(ledger.rows.first()).toBeVisible();
    await ledger.rows.first().click();
    await expect(page.getByTestId('ledger-details')).toBeVisible();
    await expect(page.getByTestId('ledger-proof')).toHaveAttribute('data-status', /^(ok|pending|failed|error)$/);
    await expectSound(app, 'ledger', size);
    await ledger.rows.first().click();

    await page
      .getByRole('button', { name: /export/i })
      .first()
      .click();
    await expect(ledger.exportDialog).toBeVisible();
    await expectSound(app, 'export-dialog', size);
    await escapeDialog(page, 'export-dialog');
  }

  // Three asks waiting on the smallest window: the strip takes part of it, and the call each one asks
  // about stays in sight in the run's timeline under it.
  const small = SIZES[0]!;
  await page.setViewportSize(small);
  const asks = ['one', 'two', 'three'].map((n) => agent.exec(box.id, ['echo', `${ASK_ARG_PREFIX}${n}`]));
  await runs.open();
  await expect(runs.approvalsPanel.getByTestId('approval')).toHaveCount(3);
  await expect(runs.calls()).toHaveCount(5);
  const strip = (await runs.approvalsPanel.boundingBox())!;
  expect(strip.height, 'the approvals strip leaves most of the window to the view').toBeLessThanOrEqual(small.height / 2);
  const waiting = runs.calls().last();
  await expect(waiting, 'the waiting call is in sight').toBeInViewport({ ratio: 0.6 });
  expect((await waiting.boundingBox())!.y, 'the waiting call is below the strip').toBeGreaterThanOrEqual(strip.y + strip.height);
  await expectSound(app, 'approvals', small);
  const prompts = runs.approvalsPanel.getByTestId('approval');
  for (let left = 2; left >= 0; left--) {
    await prompts.first().getByTestId('approval-deny').click();
    await expect(prompts).toHaveCount(left);
  }
  for (const answer of await Promise.all(asks)) expect(answer.error?.code).toBe('E_POLICY_DENIED');

  // A write's diff in its prompt, on the smallest window: it scrolls inside the strip.
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i}: ${'word '.repeat(i % 12)}`).join('\n');
  const write = agent.writeFile(box.id, `${ASK_PATH}/long.txt`, `${lines}\n`).catch((err: unknown) => err);
  const prompt = runs.approval(`${ASK_PATH}/long.txt`);
  await expect(prompt.getByTestId('approval-effect-text')).toBeVisible();
  expect((await runs.approvalsPanel.boundingBox())!.height, 'the strip with a diff leaves most of the window').toBeLessThanOrEqual(
    small.height / 2,
  );
  await expectSound(app, 'approval-diff', small);
  await runs.answer(prompt, 'deny');
  await write;

  await app.go('sandboxes');
  await app.sandboxes.open(box.name);
  await review.tab('snapshots');
  const remove = await review.ask('remove', 'sized');
  await remove.getByTestId('confirm-snapshot-remove').click();
  await expect(review.row('sized')).toHaveCount(0);
});
