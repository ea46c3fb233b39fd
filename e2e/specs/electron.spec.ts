// The same control panel in Electron, through Playwright's _electron, where a binary exists. This
// machine cannot download Electron's binary: then the spec is skipped and says so.
import { _electron as electron, test, expect } from '@playwright/test';
import { existsSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');

function electronBinary(): string | null {
  if (process.env.WARDEN_ELECTRON && existsSync(process.env.WARDEN_ELECTRON)) return process.env.WARDEN_ELECTRON;
  try {
    const pkg = createRequire(join(root, 'package.json')).resolve('electron/package.json');
    const pathFile = join(dirname(pkg), 'path.txt');
    if (!existsSync(pathFile)) return null;
    const bin = join(dirname(pkg), 'dist', readFileSync(pathFile, 'utf8').trim());
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

const binary = electronBinary();
if (!binary) console.log('electron specs: skipped: no Electron binary (node_modules/electron/dist is not installed on this machine)');

test.describe('electron shell', () => {
  test.skip(!binary, 'skipped: no Electron binary');

  test('opens hardened, lists sandboxes and answers the contract over IPC', async () => {
    const home = mkdtempSync(join(tmpdir(), 'warden-e2e-electron-'));
    const app = await electron.launch({
      executablePath: binary!,
      args: [join(root, 'out/main/index.js')],
      env: { ...process.env, WARDEN_HOME: home },
    });
    try {
      const page = await app.firstWindow();
      await expect(page.getByTestId('engine-status')).toHaveAttribute('data-status', 'connected', { timeout: 60_000 });
      // Nothing of Node in the page, and exactly one object from the preload.
      const surface = await page.evaluate(() => {
        const g = globalThis as unknown as Record<string, unknown>;
        return {
          require: typeof g.require,
          process: typeof g.process,
          warden: typeof g.warden,
          keys: Object.keys(g.warden as object).sort(),
        };
      });
      expect(surface).toEqual({
        require: 'undefined',
        process: 'undefined',
        warden: 'object',
        keys: ['invoke', 'kind', 'onLink', 'ready', 'subscribe'],
      });
      // Bad input is refused by main's validation, as the envelope.
      const answer = await page.evaluate(() => {
        const bridge = (globalThis as unknown as { warden: { invoke(m: string, p: unknown): Promise<unknown> } }).warden;
        return bridge.invoke('sandbox.create', { memory: '12q' });
      });
      expect(answer).toMatchObject({ error: { code: 'E_BAD_INPUT' } });
      await page.screenshot({ path: join(root, 'e2e/screenshots/electron.png') });
    } finally {
      await app.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
