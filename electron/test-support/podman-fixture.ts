// A real engine for integration specs, in a temp WARDEN_HOME, that destroys what each spec made.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { PodmanEngine } from '../engine/podman/podman-engine.js';
import { SandboxSpecSchema, type SandboxInfo, type SandboxSpecInput } from '../../shared/types/sandbox.js';
import { TEST_LABEL_KEY } from './test-label.js';
import { LABEL } from '../engine/podman/labels.js';
import { afterAll, beforeAll } from 'vitest';
import { collectExec } from '../engine/podman/exec-session.js';
import type { WardenEngine } from '../engine/engine.js';
import { openWarden, type Warden } from '../engine/open-warden.js';
import type { Ledger } from '../engine/ledger/index.js';

export interface TestEngine {
  engine: PodmanEngine;
  home: string;
  runId: string;
  /** Creates (and starts) a labelled sandbox with a unique name. */
  create(spec?: SandboxSpecInput): Promise<SandboxInfo>;
  /** Runs a shell command in a sandbox and collects it, output as text too. */
  sh(id: string, cmd: string): Promise<Awaited<ReturnType<typeof collectExec>> & { out: string; err: string }>;
  cleanup(): Promise<void>;
}

/** The spec file's engine: opened before its tests, everything it made removed after them. */
export function useTestEngine(): TestEngine {
  let current: TestEngine | undefined;
  beforeAll(async () => {
    current = await openTestEngine();
  });
  afterAll(async () => {
    await current?.cleanup();
  });
  return new Proxy({} as TestEngine, {
    get: (_target, key) => {
      if (!current) throw new Error('the test engine is opened in beforeAll: use it inside a test');
      return current[key as keyof TestEngine];
    },
  });
}

export async function openTestEngine(): Promise<TestEngine> {
  const home = mkdtempSync(join(tmpdir(), 'warden-spec-'));
  const engine = await PodmanEngine.open({ home, startService: false });
  const runId = randomBytes(4).toString('hex');
  const made: string[] = [];
  return {
    engine,
    home,
    runId,
    async create(spec = {}) {
      const name = spec.name ?? `t-${runId}-${made.length}`;
      made.push(name);
      const parsed = SandboxSpecSchema.parse({ ...spec, name, labels: { ...spec.labels, [TEST_LABEL_KEY]: runId } });
      return engine.sandboxes.create(parsed);
    },
    async sh(id, cmd) {
      const r = await collectExec(engine.connection, id, { cmd });
      return { ...r, out: r.stdout.toString(), err: r.stderr.toString() };
    },
    async cleanup() {
      const mine = (await engine.sandboxes.list().catch(() => [])).filter((s) => s.labels[TEST_LABEL_KEY] === runId);
      await Promise.all(mine.map((s) => engine.sandboxes.destroy(s.id).catch(() => undefined)));
      engine.close();
      // Whatever the engine could not remove (a spec closed it first, the service went away) goes
      // through the podman CLI: a spec never leaves a sandbox running.
      // Both filters: the run label, and the home's own (a warm pool of this home, opened without the label, is swept too).
      const ps = (filter: string) => spawnSync('podman', ['ps', '-aq', '--filter', filter], { encoding: 'utf8' }).stdout?.trim() ?? '';
      const left = [ps(`label=${TEST_LABEL_KEY}=${runId}`), ps(`label=${LABEL.home}=${engine.sandboxes.homeId}`)].join(' ').trim();
      if (left) spawnSync('podman', ['rm', '-f', '-t', '0', ...new Set(left.split(/\s+/))], { stdio: 'ignore' });
      // Their disks (a loop mount under home) go before home does: rm -r must never walk into a mount.
      await engine.disks.sweep(0);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The whole engine over a test engine, wired as every door wires it (no gateway): its ledger in the spec's home, acting as `tester`. */
export interface TestWarden {
  t: TestEngine;
  ledger: Ledger;
  engine: WardenEngine;
  warden: Warden<null>;
}

export async function openTestWarden(): Promise<TestWarden> {
  const t = await openTestEngine();
  const warden = await openWarden(t.home, { podman: t.engine, actor: 'tester', gateway: false });
  return { t, ledger: warden.ledger, engine: warden.engine, warden };
}

/**
 * Background attestations land first; the ledger closes (it signs a checkpoint) before its home
 * is removed; the Warden engine closes last, since cleanup needs the Podman engine it would close.
 */
export async function closeTestWarden(w: TestWarden | undefined): Promise<void> {
  await w?.engine.attestations.idle();
  w?.warden.close(); // the ledger: the Podman engine is the test engine's
  await w?.t.cleanup();
  w?.engine.close();
}
