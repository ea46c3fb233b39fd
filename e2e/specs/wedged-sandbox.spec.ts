// A wedged sandbox in the control panel: Podman never answers for it, nor for the list over every
// container (it waits on each), forced at the Podman socket (fixtures/wedge-proxy.ts) under a real
// `warden serve`. The list then says why and offers a retry instead of "loading…" for ever; with
// sandboxes seen before, the wedged one's row is marked and says what to do, and the rest still show.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, expect } from '../fixtures/test.js';
import { sweepE2eSandboxes, TEST_LABEL_KEY } from '../fixtures/podman.js';
import { startWardenServe, type WardenServe } from '../fixtures/warden-serve.js';
import { startWedgeProxy } from '../fixtures/wedge-proxy.js';
import { AppPage } from '../pages/app-page.js';

/** Short, so the spec does not wait long on what never answers; long enough for a busy host's real list. */
const BOUND_MS = 5000;
/** The whole list's bound, then one sandbox's: what a snapshot waits before it shows a wedged row. */
const WEDGED_SNAPSHOT = { timeout: 4 * BOUND_MS + 20_000 };

async function createThroughApi(serve: WardenServe, name: string, runId: string): Promise<string> {
  const token = readFileSync(join(serve.home, 'user.token'), 'utf8').trim();
  const res = await fetch(`${serve.url}/v1/sandboxes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, labels: { [TEST_LABEL_KEY]: runId } }),
  });
  const body = (await res.json()) as { result?: { id: string } };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.result!.id;
}

test('a wedged Podman list shows an error with a retry; a wedged sandbox is marked on its row and the rest still show', async ({
  podmanService,
  browser,
  runId,
}) => {
  test.setTimeout(240_000);
  const proxy = await startWedgeProxy(podmanService.socketPath);
  const serve = await startWardenServe(`unix://${proxy.socketPath}`, { env: { WARDEN_PODMAN_LIST_BOUND_MS: String(BOUND_MS) } });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const app = new AppPage(page, serve, runId);
  try {
    await test.step('nothing seen yet, the whole list wedged: an error that says what to do, and a retry', async () => {
      proxy.wedgeWholeList();
      await app.signIn();
      const error = page.getByTestId('sandbox-list-error');
      await expect(error).toBeVisible(WEDGED_SNAPSHOT);
      await expect(error).toContainText('Podman did not answer the sandbox list within 5 s');
      await expect(error).toContainText('podman rm -f <id>');
      await expect(page.getByTestId('sandbox-count')).toHaveText('not loaded');
      await app.screenshot('sandbox-list-wedged');
      proxy.unwedge();
      await page.getByTestId('sandbox-list-retry').click();
      await expect(page.getByTestId('sandbox-count')).toHaveText('0 sandboxes');
      await expect(error).toHaveCount(0);
    });

    await test.step('one sandbox wedged: its row is marked with what to do, the other shows as it is', async () => {
      const stuck = app.sandboxes.name('stuck');
      const fine = app.sandboxes.name('fine');
      const stuckId = await createThroughApi(serve, stuck, runId);
      await createThroughApi(serve, fine, runId);
      await expect(app.sandboxes.row(stuck)).toBeVisible();
      await expect(app.sandboxes.row(fine)).toBeVisible();
      proxy.wedge(stuckId);
      proxy.wedgeWholeList();
      await page.reload();
      await expect(app.sandboxes.row(stuck)).toHaveAttribute('data-unreachable', 'true', WEDGED_SNAPSHOT);
      await expect(app.sandboxes.row(stuck).getByTestId('sandbox-unreachable')).toHaveText('no answer');
      const note = page.locator(`[data-testid="sandbox-unreachable-note"][data-name="${stuck}"]`);
      await expect(note).toContainText(`Podman did not answer for sandbox ${stuck} within 5 s`);
      await expect(note).toContainText(`podman rm -f ${stuckId.slice(0, 12)}`);
      await expect(app.sandboxes.row(fine)).not.toHaveAttribute('data-unreachable', 'true');
      await expect(app.sandboxes.row(fine).getByTestId('sandbox-state')).toHaveText('running');
      await expect(page.getByTestId('sandbox-count')).toHaveText('2 sandboxes');
      await expect(page.getByTestId('sandbox-list-error')).toHaveCount(0);
      await page.mouse.move(0, 0);
      await app.screenshot('sandbox-row-wedged');
    });
  } finally {
    proxy.unwedge();
    await page.close();
    sweepE2eSandboxes(runId);
    await serve.stop();
    await proxy.close();
  }
});
