import { test, expect } from '../fixtures/test.js';

test('every view renders at 1280×800', async ({ app }) => {
  await app.go('runs');
  await expect(app.page.getByTestId('runs-view')).toBeVisible();
  await expect(app.page.getByText('loading runs…')).toHaveCount(0);
  await app.screenshot('runs');
  await app.go('ledger');
  await expect(app.page.getByTestId('ledger-view')).toBeVisible();
  await expect(app.page.getByTestId('ledger-row').first().or(app.page.getByTestId('ledger-empty'))).toBeVisible();
  await app.screenshot('ledger');
  await app.go('sandboxes');
  await expect(app.page.getByRole('heading', { name: 'Sandboxes' })).toBeVisible();
});
