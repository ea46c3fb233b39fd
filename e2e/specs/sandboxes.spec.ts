import { test, expect } from '../fixtures/test.js';
import { podman } from '../fixtures/podman.js';

test.describe('sandboxes', () => {
  test('created from the dialog appears live and running', async ({ app }) => {
    const name = app.sandboxes.name('web');
    await app.sandboxes.openCreateDialog();
    await app.sandboxes.fillCreateDialog({ name, memory: '256m', cpus: '0.5', env: 'GREETING=hello' });
    await app.screenshot('create-dialog');
    await app.sandboxes.submitCreateDialog();
    const row = app.sandboxes.row(name);
    await expect(row).toHaveAttribute('data-state', 'running', { timeout: 60_000 });
    await expect(row).toContainText('localhost/warden-sandbox');
    // Stats arrive at 1 Hz and draw the sparklines.
    await expect(row.getByTestId('mem-spark')).toContainText(/MiB|KiB/, { timeout: 15_000 });
    await app.screenshot('sandboxes');
  });

  test('the dialog names a bad field before anything is sent', async ({ app }) => {
    await app.sandboxes.openCreateDialog();
    await app.sandboxes.fillCreateDialog({ name: app.sandboxes.name('bad'), memory: '12q' });
    await app.sandboxes.submitCreateDialog();
    await expect(app.sandboxes.dialog.locator('.field-error')).toContainText('is not a size');
    await app.screenshot('create-dialog-error');
    await app.page.keyboard.press('Escape');
    await expect(app.sandboxes.dialog).toHaveCount(0);
  });

  test('stop and start follow in the list; destroy asks first and names what is lost', async ({ app }) => {
    const name = app.sandboxes.name('life');
    const row = await app.sandboxes.create({ name });
    await row.getByRole('button', { name: `Stop ${name}` }).click();
    await expect(row).toHaveAttribute('data-state', 'exited', { timeout: 30_000 });
    await row.getByRole('button', { name: `Start ${name}` }).click();
    await expect(row).toHaveAttribute('data-state', 'running', { timeout: 30_000 });
    await app.sandboxes.openDestroyDialog(name);
    await expect(app.sandboxes.destroyDialog).toContainText(name);
    await expect(app.sandboxes.destroyDialog).toContainText('every process running in it');
    await expect(app.sandboxes.destroyDialog).toContainText('its filesystem');
    await app.screenshot('destroy-dialog');
    await app.sandboxes.confirmDestroy();
    await expect(row).toHaveCount(0);
  });

  test('a sandbox removed with the podman CLI disappears from the list', async ({ app }) => {
    const name = app.sandboxes.name('outside');
    const row = await app.sandboxes.create({ name });
    podman(['rm', '-f', '-t', '0', name]);
    await expect(row).toHaveCount(0, { timeout: 5_000 });
  });

  test('a sandbox stopped with the podman CLI shows as exited', async ({ app }) => {
    const name = app.sandboxes.name('cli-stop');
    const row = await app.sandboxes.create({ name });
    podman(['stop', '-t', '0', name]);
    await expect(row).toHaveAttribute('data-state', 'exited', { timeout: 5_000 });
  });

  test('names from sandboxes are text, never HTML', async ({ app }) => {
    // A label value with markup is shown as typed (names cannot hold markup: the schema forbids it).
    const name = app.sandboxes.name('html');
    await app.sandboxes.create({ name, env: 'X=<img src=x onerror=alert(1)>' });
    await app.sandboxes.open(name);
    await expect(app.page.locator('img[src=x]')).toHaveCount(0);
  });
});
