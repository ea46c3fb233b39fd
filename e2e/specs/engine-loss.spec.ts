import { test, expect } from '../fixtures/test.js';

test('Podman stopped: the banner says so and what to do; restarted: the UI recovers by itself', async ({ app, podmanService }) => {
  const name = app.sandboxes.name('survivor');
  await app.sandboxes.create({ name });
  await podmanService.stop();
  try {
    await expect(app.banner).toBeVisible({ timeout: 30_000 });
    await expect(app.banner).toContainText(/Podman/);
    await expect(app.engineStatus).not.toHaveAttribute('data-status', 'connected');
    await expect(app.banner).toHaveAttribute('data-status', 'unreachable', { timeout: 30_000 });
    await app.screenshot('engine-unreachable');
    // Runs and the ledger need no Podman: a page opened now still shows them.
    await app.page.reload();
    await expect(app.banner).toHaveAttribute('data-status', 'unreachable', { timeout: 30_000 });
    await app.go('runs');
    await expect(app.page.getByTestId('run-count')).toHaveText(/\d+ runs?/);
    await app.go('ledger');
    await expect(app.page.getByTestId('ledger-row').first()).toBeVisible();
    await app.go('sandboxes');
  } finally {
    await podmanService.start();
  }
  await expect(app.banner).toHaveCount(0, { timeout: 30_000 });
  await expect(app.engineStatus).toHaveAttribute('data-status', 'connected');
  // The snapshot taken on recovery still has the sandbox.
  await expect(app.sandboxes.row(name)).toBeVisible();
});
