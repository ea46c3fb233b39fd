// `warden serve` stopped by a signal removes its warm pool and stops the Podman service it started,
// before it exits. The events forced: the one `timeout 60 npm start` (or Ctrl-C) makes, a SIGTERM to
// the whole process group, then the same signal again as `npm start`'s script forwards it; a SIGINT to
// serve alone; and a SIGTERM to npm alone (a supervisor that signals its main pid), which npm passes
// on. Serve runs as a user's would on this machine: no CONTAINER_HOST, so it starts a Podman service
// of its own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { homeId } from '../engine/home-id.js';
import { LABEL } from '../engine/podman/labels.js';
import { DiskLimits } from '../engine/podman/disk-limit.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';

interface Served {
  home: string;
  homeId: string;
  serve: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
  /** Resolves once serve has printed this. */
  said: (pattern: RegExp) => Promise<void>;
}

const podmanIds = (filter: string) =>
  spawnSync('podman', ['ps', '-aq', '--no-trunc', '--filter', filter], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort();

/** The pids of `podman system service` listening on this home's own socket (as owned-service.ts starts it). */
function ownedServicePids(home: string): number[] {
  const listen = `unix://${join(home, 'run', 'podman.sock')}`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.includes('service') && args.at(-2) === listen) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Processes started for this home (serve, npm's script), found by their WARDEN_HOME: a failed spec leaves none. */
function processesOf(home: string): number[] {
  const mark = `WARDEN_HOME=${home}\0`;
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/environ`, 'utf8').includes(mark);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Resolves when the process is gone: `tail --pid` exits then (no clock of ours involved). */
const gone = (pid: number) => new Promise((resolve) => spawn('tail', [`--pid=${pid}`, '-f', '/dev/null']).once('exit', resolve));

const started: Served[] = [];

const root = fileURLToPath(new URL('../..', import.meta.url));
const SERVE = [process.execPath, '--import', 'tsx', 'electron/cli/index.ts', 'serve', '--port', '0'];
/** `npm start` as a user runs it, minus the set-up and builds (done once in beforeAll). */
const NPM_START = ['npm', 'start', '--', '--web', '--no-build'];

beforeAll(() => {
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-cli.mjs')], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
});

/** Serve (by `argv`, with `extraEnv`) on a fresh home with a pool of two; resolves once both pooled sandboxes have started (Podman's events say so). */
async function serveWithWarmPool(argv = SERVE, extraEnv: NodeJS.ProcessEnv = {}, poolSize = 2): Promise<Served> {
  const home = mkdtempSync(join(tmpdir(), 'warden-signals-'));
  const id = homeId(home);
  const runId = randomBytes(4).toString('hex');
  writeFileSync(join(home, 'pool.yaml'), `size: ${poolSize}\nlabels:\n  ${TEST_LABEL_KEY}: "${runId}"\n`);
  const events = spawn('podman', ['events', '--filter', 'event=start', '--filter', `label=${LABEL.home}=${id}`, '--format', '{{.ID}}']);
  const starts = new Set<string>();
  const bothStarted = new Promise<void>((resolve) =>
    events.stdout.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) starts.add(line.trim());
      if (starts.size >= 2) resolve();
    }),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, WARDEN_HOME: home };
  delete env.CONTAINER_HOST;
  Object.assign(env, extraEnv);
  const serve = spawn(argv[0]!, argv.slice(1), {
    cwd: root,
    env,
    // A group of its own, as a shell gives a job: the group signal below reaches serve and what it started in it.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  serve.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  serve.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => serve.once('exit', (code) => resolve(code)));
  const said = (pattern: RegExp) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!pattern.test(out)) return;
        serve.stderr!.off('data', check);
        resolve();
      };
      serve.stderr!.on('data', check);
      check();
    });
  const served = { home, homeId: id, serve, exited, output: () => out, said };
  started.push(served);
  try {
    const ready = poolSize > 0 ? bothStarted : said(/warden: serving/);
    await Promise.race([ready, exited.then(() => Promise.reject(new Error(`warden serve exited before its pool filled:\n${out}`)))]);
  } finally {
    events.kill();
  }
  expect(podmanIds(`label=${LABEL.pool}`).filter((c) => starts.has(c))).toHaveLength(poolSize);
  return served;
}

afterEach(async () => {
  for (const s of started.splice(0)) {
    if (s.serve.exitCode === null && s.serve.signalCode === null) {
      s.serve.kill('SIGKILL');
      await s.exited;
    }
    for (const pid of processesOf(s.home)) process.kill(pid, 'SIGKILL');
    const left = podmanIds(`label=${LABEL.home}=${s.homeId}`);
    if (left.length) spawnSync('podman', ['rm', '-f', '-t', '0', ...left], { stdio: 'ignore' });
    for (const pid of ownedServicePids(s.home)) process.kill(pid, 'SIGTERM');
    await new DiskLimits(s.home).sweep(0);
    rmSync(s.home, { recursive: true, force: true });
  }
});

describe('warden serve stopped by a signal', () => {
  it('SIGTERM to its process group, then again to serve (timeout + npm start): the pool is removed, its Podman service stopped', async () => {
    const s = await serveWithWarmPool();
    const services = ownedServicePids(s.home);
    expect(services).toHaveLength(1);
    process.kill(-s.serve.pid!, 'SIGTERM');
    // The forwarded copy comes once serve is already stopping (it is draining two sandboxes then).
    await s.said(/SIGTERM: stopping/);
    s.serve.kill('SIGTERM');
    expect(await s.exited, s.output()).toBe(0);
    expect(s.output()).toMatch(/SIGTERM again: still stopping/);
    expect(podmanIds(`label=${LABEL.home}=${s.homeId}`)).toEqual([]);
    await gone(services[0]!);
    expect(ownedServicePids(s.home)).toEqual([]);
  });

  it('SIGINT to serve alone (Ctrl-C where serve runs by itself): the pool is removed before it exits', async () => {
    const s = await serveWithWarmPool();
    s.serve.kill('SIGINT');
    expect(await s.exited, s.output()).toBe(0);
    expect(podmanIds(`label=${LABEL.home}=${s.homeId}`)).toEqual([]);
  });

  it('SIGTERM to npm alone (npm start): npm passes it on, and the pool is removed before npm exits', async () => {
    const s = await serveWithWarmPool(NPM_START);
    const services = ownedServicePids(s.home);
    expect(services).toHaveLength(1);
    s.serve.kill('SIGTERM'); // npm's pid only, not its group
    await s.exited;
    expect(s.output()).toMatch(/warden: stopped/);
    expect(podmanIds(`label=${LABEL.home}=${s.homeId}`)).toEqual([]);
    await gone(services[0]!);
    expect(ownedServicePids(s.home)).toEqual([]);
  });

  it('a Podman that stops answering while serve removes its pool: serve still ends, says what it left, and the ledger verifies', async () => {
    const s = await serveWithWarmPool(SERVE, { WARDEN_STOP_BOUND_MS: '2000' });
    const pooled = podmanIds(`label=${LABEL.home}=${s.homeId}`);
    expect(pooled).toHaveLength(2);
    const [service] = ownedServicePids(s.home);
    // Wedged: the Podman service serve started answers nothing from now on.
    process.kill(service!, 'SIGSTOP');
    try {
      s.serve.kill('SIGTERM');
      expect(await s.exited, s.output()).toBe(1);
    } finally {
      process.kill(service!, 'SIGCONT');
    }
    expect(s.output()).toMatch(/stopped anyway and left the warm pool's sandboxes/);
    expect(s.output()).not.toMatch(/warden: stopped/);
    expect(podmanIds(`label=${LABEL.home}=${s.homeId}`)).toEqual(pooled);
    // The service serve started was told to stop all the same: it does once it runs again.
    await gone(service!);
    const verify = spawnSync(process.execPath, [join(root, 'out', 'cli', 'warden.mjs'), 'audit', 'verify'], {
      env: { ...process.env, WARDEN_HOME: s.home },
      encoding: 'utf8',
    });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
  });

  it('ends once stopped, even while an agent call it took hangs on a Podman that stopped answering', async () => {
    const s = await serveWithWarmPool(SERVE, {}, 0);
    const url = s.output().split('\n')[0]!;
    const token = readFileSync(join(s.home, 'user.token'), 'utf8').trim();
    const socket = join(s.home, 'run', 'podman.sock');
    // Connections waiting for the stopped service to take them: its listening socket's queue.
    const waitingAtPodman = () => Number(spawnSync('ss', ['-xlH', 'src', socket], { encoding: 'utf8' }).stdout.trim().split(/\s+/)[2] ?? 0);
    const [service] = ownedServicePids(s.home);
    process.kill(service!, 'SIGSTOP');
    try {
      const call = fetch(`${url}/v1/sandboxes/nosuch/exec`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cmd: 'true' }),
      }).catch(() => null);
      // Until serve has asked Podman for it (a connection of its own, never answered).
      while (waitingAtPodman() < 1) await new Promise((r) => setTimeout(r, 50));
      s.serve.kill('SIGTERM');
      expect(await s.exited, s.output()).toBe(0);
      expect(s.output()).toMatch(/warden: stopped/);
      await call;
    } finally {
      process.kill(service!, 'SIGCONT');
    }
  });
});
