// A real engine for integration specs, in a temp WARDEN_HOME, that destroys what each spec made.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { PodmanEngine } from '../engine/podman/podman-engine.js';
import { SandboxSpecSchema, type SandboxInfo, type SandboxSpecInput } from '../../shared/types/sandbox.js';
import { TEST_LABEL_KEY } from './test-label.js';

export interface TestEngine {
  engine: PodmanEngine;
  home: string;
  runId: string;
  /** Creates (and starts) a labelled sandbox with a unique name. */
  create(spec?: SandboxSpecInput): Promise<SandboxInfo>;
  cleanup(): Promise<void>;
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
    async cleanup() {
      const mine = (await engine.sandboxes.list().catch(() => [])).filter((s) => s.labels[TEST_LABEL_KEY] === runId);
      await Promise.all(mine.map((s) => engine.sandboxes.destroy(s.id).catch(() => undefined)));
      engine.close();
      // Whatever the engine could not remove (a spec closed it first, the service went away) goes
      // through the podman CLI: a spec never leaves a sandbox running.
      const left = spawnSync('podman', ['ps', '-aq', '--filter', `label=${TEST_LABEL_KEY}=${runId}`], { encoding: 'utf8' }).stdout?.trim();
      if (left) spawnSync('podman', ['rm', '-f', '-t', '0', ...left.split(/\s+/)], { stdio: 'ignore' });
      // Their disks (a loop mount under home) go before home does: rm -r must never walk into a mount.
      await engine.disks.sweep(0);
      rmSync(home, { recursive: true, force: true });
    },
  };
}
