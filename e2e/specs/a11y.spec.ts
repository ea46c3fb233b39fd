// What a screen reader and a contrast checker find in every view: axe-core (WCAG 2.x A and AA rules)
// over the sandbox list, the dialogs, the sandbox detail, Runs and the Ledger, with one sandbox an
// agent made and ran a command in. Serious and critical findings fail; the rest are printed.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { test, expect } from '../fixtures/test.js';
import { HttpAgent } from '../fixtures/agent.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';
import type { AppPage } from '../pages/app-page.js';
import { RunsPage } from '../pages/runs-page.js';
import { LedgerPage } from '../pages/ledger-page.js';
import { ReviewPage } from '../pages/review-page.js';
import { ASK_PATH } from '../fixtures/policy.js';

async function expectAccessible(app: AppPage, view: string, page: Page = app.page): Promise<void> {
  // The terminal's rows are xterm's own rendering, not ours to label.
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).exclude('.xterm').analyze();
  const blocking = result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  for (const v of result.violations.filter((x) => x.impact !== 'serious' && x.impact !== 'critical')) {
    console.log(`${view}: ${v.id} (${v.impact}) ${v.help}`);
  }
  expect.soft(blocking, `${view}: serious or critical accessibility violations`).toEqual([]);
}

test('every view passes axe at 1280×800', async ({ app, serve, runId, browser }) => {
  const page = app.page;
  // The sign-in page, as a browser without the session cookie sees it.
  const elsewhere = await browser.newContext();
  const stranger = await elsewhere.newPage();
  await stranger.goto(serve.url);
  await expect(stranger.getByTestId('login-view')).toBeVisible();
  await expectAccessible(app, 'sign-in', stranger);
  await elsewhere.close();

  const runs = new RunsPage(page);
  const ledger = new LedgerPage(page);
  const agent = HttpAgent.create(serve, `${runId}-a11y-agent`);
  const box = await agent.createSandbox({ name: `${runId}-a11y-box`, labels: { [TEST_LABEL_KEY]: runId } });
  await agent.exec(box.id, ['sh', '-c', 'echo checked']);
  const row = app.sandboxes.row(box.name);
  await expect(row).toHaveAttribute('data-state', 'running');
  await expect(row.getByTestId('cpu-spark')).not.toHaveText('–', { timeout: 60_000 }); // the first stats sample
  await expectAccessible(app, 'sandboxes');

  await page.getByRole('button', { name: 'New sandbox' }).click();
  await expect(app.sandboxes.dialog).toBeVisible();
  await expectAccessible(app, 'create dialog');
  await page.keyboard.press('Escape');

  await row.getByRole('button', { name: `Destroy ${box.name}` }).click();
  await expect(app.sandboxes.destroyDialog).toBeVisible();
  await expectAccessible(app, 'destroy dialog');
  await page.keyboard.press('Escape');
  await expect(app.sandboxes.destroyDialog).toHaveCount(0);

  await app.sandboxes.open(box.name);
  await expect(app.detail.terminalStatus).toHaveText('connected');
  await expectAccessible(app, 'sandbox detail');

  // The detail's review tabs: a diff both ways, and snapshots with one in the list and each dialog.
  const review = new ReviewPage(page);
  await agent.exec(box.id, ['sh', '-c', "printf 'one\\ntwo\\n' > notes.txt"]);
  await review.tab('changes');
  await expect(review.diff('notes.txt')).toBeVisible();
  await expectAccessible(app, 'sandbox changes');
  await page.getByTestId('sandbox-changes-layout-split').click();
  await expect(review.split('notes.txt')).toBeVisible();
  await expectAccessible(app, 'sandbox changes side by side');
  await review.tab('snapshots');
  await review.take('a11y');
  await expectAccessible(app, 'snapshots');
  for (const kind of ['reset', 'fork'] as const) {
    await review.ask(kind, 'a11y');
    await expectAccessible(app, `snapshot ${kind} dialog`);
    await page.keyboard.press('Escape');
    await expect(review.dialog(kind)).toHaveCount(0);
  }
  const remove = await review.ask('remove', 'a11y');
  await expectAccessible(app, 'snapshot remove dialog');
  await remove.getByTestId('confirm-snapshot-remove').click();
  await expect(review.row('a11y')).toHaveCount(0);
  await review.tab('shell');

  // A write that asks, with its diff in the prompt.
  const asked = agent.writeFile(box.id, `${ASK_PATH}/a11y.txt`, 'proposed\n').catch((err: unknown) => err);
  await expect(runs.approval(`${ASK_PATH}/a11y.txt`).getByTestId('approval-effect-text')).toBeVisible();
  await expectAccessible(app, 'approval with a diff');
  await runs.answer(runs.approval(`${ASK_PATH}/a11y.txt`), 'approve-once');
  expect(await asked).toMatchObject({ bytes: 9 });

  await runs.open();
  await runs.select(agent.name);
  await expect(runs.calls()).toHaveCount(4);
  await expectAccessible(app, 'runs');
  await page.getByTestId('run-tab-timeline').click();
  await expect(page.getByTestId('run-timeline').getByTestId('tl-status')).toHaveAttribute('data-loading', 'false');
  await expectAccessible(app, 'run timeline');
  await page.getByTestId('run-tab-calls').click();

  await ledger.open();
  await ledger.rows.first().click();
  await expect(page.getByTestId('ledger-details')).toBeVisible();
  await expect(page.getByTestId('ledger-proof')).toHaveAttribute('data-status', /^(ok|pending|failed|error)$/);
  await expectAccessible(app, 'ledger');

  await page.getByRole('button', { name: 'Export report' }).click();
  await expect(ledger.exportDialog).toBeVisible();
  await expectAccessible(app, 'export dialog');
});
