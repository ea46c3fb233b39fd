// The end-to-end suite: the web shell (`warden serve`) in Debian's Chromium against real Podman;
// the Electron specs run where an Electron binary exists. One worker: two cores, one engine.
import { defineConfig } from '@playwright/test';
import { resolve } from 'node:path';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './fixtures/chromium.js';

const root = resolve(import.meta.dirname, '..');
const results = resolve(root, 'node_modules/.cache/warden-test');
// scripts/test.sh passes --reporter=list,json on the command line, which replaces the reporters
// below; the JSON reporter then reads its file from this variable.
process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ??= resolve(results, 'e2e.json');

export default defineConfig({
  testDir: './specs',
  outputDir: resolve(results, 'e2e-artifacts'),
  globalSetup: './fixtures/global-setup.ts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 20_000 },
  reporter: [['list'], ['json', { outputFile: resolve(results, 'e2e.json') }]],
  use: {
    viewport: { width: 1280, height: 800 },
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
    screenshot: 'only-on-failure',
    trace: 'off',
    actionTimeout: 20_000,
  },
  projects: [
    { name: 'web', testIgnore: /electron\.spec\.ts/ },
    { name: 'electron', testMatch: /electron\.spec\.ts/ },
  ],
});
