// The panel with the keyboard alone: a sandbox created, opened and destroyed without the mouse, with a
// visible focus ring on each stop; dialogs keep Tab inside, close on Escape and give focus back; the
// sandbox list and the ledger move with the arrow keys.
import type { Page } from '@playwright/test';
import { test, expect } from '../fixtures/test.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';

/** What has focus: its accessible name as a person would read it, and whether a ring is drawn. */
function focused(page: Page): Promise<{ name: string; testId: string | null; ring: boolean; inDialog: boolean }> {
  return page.evaluate(`(() => {
    const el = document.activeElement;
    const s = getComputedStyle(el);
    return {
      name: (el.getAttribute('aria-label') || el.textContent || el.getAttribute('name') || '').trim(),
      testId: el.getAttribute('data-testid'),
      ring: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0,
      inDialog: !!el.closest('[role=dialog]'),
    };
  })()`);
}

/** Presses Tab (up to 40 times) until the focused element has this name. */
async function tabTo(page: Page, name: string | RegExp, key = 'Tab'): Promise<void> {
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press(key);
    const now = await focused(page);
    if (typeof name === 'string' ? now.name === name : name.test(now.name)) {
      expect(now.ring, `a focus ring on "${now.name}"`).toBe(true);
      return;
    }
  }
  throw new Error(`Tab never reached "${name}"`);
}

test('create, open and destroy a sandbox with the keyboard alone; arrows move through the lists', async ({ app, runId }) => {
  const page = app.page;
  const name = app.sandboxes.name('keys');

  await tabTo(page, 'New sandbox');
  await page.keyboard.press('Enter');
  await expect(app.sandboxes.dialog).toBeVisible();
  expect((await focused(page)).inDialog).toBe(true);
  await page.keyboard.type(name); // the first field, focused on open
  await tabTo(page, 'labels');
  await page.keyboard.type(`${TEST_LABEL_KEY}=${runId}`);
  await tabTo(page, 'Create and start');
  // Tab past the last control comes back to the first: focus never leaves the dialog.
  await page.keyboard.press('Tab');
  expect(await focused(page)).toMatchObject({ name: 'name', inDialog: true });
  await tabTo(page, 'Create and start', 'Shift+Tab');
  await page.keyboard.press('Enter');
  await expect(app.sandboxes.dialog).toHaveCount(0, { timeout: 60_000 });
  await expect(app.sandboxes.row(name)).toHaveAttribute('data-state', 'running', { timeout: 30_000 });
  expect((await focused(page)).name, 'focus is back on the button that opened the dialog').toBe('New sandbox');

  // The list is one Tab stop; Enter opens the focused row.
  await page.keyboard.press('Tab');
  expect((await focused(page)).testId).toBe('sandbox-row');
  await page.keyboard.press('End');
  await page.keyboard.press('Home');
  expect(await page.evaluate(`document.activeElement.getAttribute('data-name')`)).toBe(name);
  await app.screenshot('keyboard-row-focus');
  await page.keyboard.press('Enter');
  await expect(app.detail.root).toBeVisible();

  // Focus was nowhere, so the shell takes it when it opens; it takes Tab too, and Ctrl+Shift+↑ leaves
  // it for the control before it: the detail's last tab (Snapshots), and Shift+Tab from there goes
  // back through the tabs to the sandbox's Destroy button.
  const shell = app.detail.terminal.locator('.xterm-helper-textarea');
  await expect(app.detail.terminalStatus).toHaveText('connected');
  await expect(shell).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(shell).toBeFocused();
  await page.keyboard.press('Control+Shift+ArrowUp');
  expect(await focused(page)).toMatchObject({ name: 'Snapshots', ring: true });
  await tabTo(page, `Destroy ${name}`, 'Shift+Tab');
  expect(await focused(page)).toMatchObject({ name: `Destroy ${name}`, ring: true });

  // Destroy: Escape first (focus comes back), then for real.
  await page.keyboard.press('Enter');
  await expect(app.sandboxes.destroyDialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(app.sandboxes.destroyDialog).toHaveCount(0);
  expect((await focused(page)).name).toBe(`Destroy ${name}`);
  await page.keyboard.press('Enter');
  await expect(app.sandboxes.destroyDialog).toBeVisible();
  await tabTo(page, `Destroy ${name}`);
  expect((await focused(page)).inDialog).toBe(true);
  await page.keyboard.press('Enter');
  await expect(app.sandboxes.destroyDialog).toHaveCount(0, { timeout: 30_000 });
  await expect(page.getByRole('heading', { name: 'Sandboxes' })).toBeFocused();
  await expect(app.sandboxes.row(name)).toHaveCount(0);

  // The ledger: one Tab stop for the entries, arrows between them, Enter shows one.
  await tabTo(page, 'Ledger', 'Shift+Tab');
  await page.keyboard.press('Enter');
  const rows = page.getByTestId('ledger-row');
  // (The list is complete once the destroy's entry is in: it is the last thing this spec did.)
  await expect(rows.first()).toHaveAttribute('data-kind', 'sandbox.destroyed');
  await tabTo(page, /^▸/);
  await page.keyboard.press('Home');
  await expect(rows.first()).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(rows.nth(1)).toBeFocused();
  await app.screenshot('keyboard-ledger-focus');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('ledger-details')).toHaveAttribute('data-seq', (await rows.nth(1).getAttribute('data-seq'))!);
  await page.keyboard.press('ArrowUp');
  await expect(rows.first()).toBeFocused();
});
