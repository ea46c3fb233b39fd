import { test, expect } from '../fixtures/test.js';
import { resolve } from 'node:path';

test('the one-time login link signs in once and leaves the address bar', async ({ browser, serve }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${serve.url}/#login=${serve.firstLoginCode}`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-status', 'connected');
  expect(page.url()).toBe(`${serve.url}/`);
  await context.close();

  // The same link again, in a fresh browser: refused, and the login form says why.
  const second = await browser.newContext();
  const again = await second.newPage();
  await again.goto(`${serve.url}/#login=${serve.firstLoginCode}`);
  await expect(again.getByTestId('login-view')).toBeVisible();
  await expect(again.getByRole('alert')).toContainText('did not work');
  expect(again.url()).toBe(`${serve.url}/`);
  await again.screenshot({ path: resolve(import.meta.dirname, '../screenshots/login.png') });

  // The UI token works in the form.
  await again.getByLabel('Login code or token').fill(serve.uiToken());
  await again.getByRole('button', { name: 'Sign in' }).click();
  await expect(again.getByTestId('engine-status')).toHaveAttribute('data-status', 'connected');
  await second.close();
});

test('another origin cannot open the socket or log in', async ({ serve, request }) => {
  const login = await request.post(`${serve.url}/ui/login`, {
    data: { code: serve.uiToken() },
    headers: { origin: 'http://evil.example' },
  });
  expect(login.status()).toBe(403);
  const host = await request.get(`${serve.url}/`, { headers: { host: 'evil.example' } });
  expect(host.status()).toBe(403);
});
