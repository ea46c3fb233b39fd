// What the UI bench runs against, set up the way the e2e suite does: the renderer and CLI built
// from the current sources, a Podman service of its own, `warden serve` in a temp WARDEN_HOME on
// it, and Debian's Chromium (bench/ui/cdp.ts) signed in with the one-time link serve prints.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { PodmanService, TEST_LABEL_KEY } from '../../e2e/fixtures/podman.js';
import { startWardenServe, type WardenServe } from '../../e2e/fixtures/warden-serve.js';
import { readServerFile } from '../../electron/server/server-file.js';
import { installProbe } from './page-probe.js';
import { BrowserPage } from './cdp.js';

const root = resolve(import.meta.dirname, '../..');
const execFileAsync = promisify(execFile);

/** The podman CLI on this host, never as a remote client of someone's CONTAINER_HOST. */
export function localPodmanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.CONTAINER_HOST;
  return env;
}

export function podman(args: string[], timeoutMs = 60_000): string {
  return execFileSync('podman', args, { encoding: 'utf8', timeout: timeoutMs, env: localPodmanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
}

export function buildApp(): void {
  const run = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  run(['scripts/build-cli.mjs']);
  run(['node_modules/electron-vite/bin/electron-vite.js', 'build', '--logLevel', 'warn']);
}

export interface Stack {
  runId: string;
  service: PodmanService;
  serve: WardenServe;
  servePid: number;
  page: BrowserPage;
  /** The warden CLI against serve's WARDEN_HOME and Podman service; resolves with stdout. */
  warden(args: string[]): Promise<string>;
  /** Creates a sandbox with the CLI, labelled with this run. */
  createSandbox(name: string, extra?: string[]): Promise<{ id: string; name: string }>;
  /** Removes every sandbox of this run; never throws. */
  sweep(): void;
  close(): Promise<void>;
}

export async function startStack(runId: string): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-ui-'));
  const service = new PodmanService(join(dir, 'podman.sock'));
  let serve: WardenServe | null = null;
  let page: BrowserPage | null = null;
  const sweep = () => sweepRun(runId);
  const close = async () => {
    sweep();
    await page?.close().catch(() => undefined);
    await serve?.stop().catch(() => undefined);
    await service.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await service.start();
    serve = await startWardenServe(service.url);
    const servePid = readServerFile(serve.home)?.pid;
    if (!servePid) throw new Error('warden serve wrote no server.json with its pid');
    page = await BrowserPage.launch();
    await installProbe(page);
    // The one-time link, as a person would follow it; the page trades it for a session cookie.
    await page.goto(`${serve.url}/#login=${serve.firstLoginCode}`);
    const p = page;
    await p.waitFor(
      'the engine connected',
      async () => (await p.attribute('[data-testid="engine-status"]', 'data-status')) === 'connected',
    );
    const home = serve.home;
    const env = { ...process.env, WARDEN_HOME: home, CONTAINER_HOST: service.url, NO_COLOR: '1' };
    const warden = async (args: string[]) =>
      (await execFileAsync(process.execPath, ['bin/warden.mjs', ...args], { cwd: root, env, timeout: 120_000 })).stdout;
    const createSandbox = async (name: string, extra: string[] = []) =>
      JSON.parse(await warden(['sandbox', 'create', '--json', '--name', name, '--label', `${TEST_LABEL_KEY}=${runId}`, ...extra])) as {
        id: string;
        name: string;
      };
    return { runId, service, serve, servePid, page, warden, createSandbox, sweep, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Removes the sandboxes labelled with this run (also a crashed earlier one's, given its id). */
export function sweepRun(runId: string): void {
  try {
    const ids = podman(['ps', '-aq', '--filter', `label=${TEST_LABEL_KEY}=${runId}`])
      .split('\n')
      .filter(Boolean);
    if (ids.length) podman(['rm', '-f', '-t', '0', ...ids], 180_000);
  } catch (err) {
    console.error(`sweep of ${runId} failed: ${String(err)}`);
  }
}
