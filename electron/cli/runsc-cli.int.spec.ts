// `warden sandbox create --runtime runsc` as a user runs it: the sandbox, inspect and the ledger all
// call it gVisor, doctor says the runtime works. Skipped (with the reason) only without runsc.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { openAuditLedger } from '../engine/open-warden.js';
import { runscInstalled } from '../engine/podman/oci-runtime.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'warden.mjs');
const name = `cli-gvisor-${randomBytes(3).toString('hex')}`;
if (!runscInstalled()) console.warn('runsc-cli.int.spec: SKIPPED, runsc is not installed (run `npm run setup`)');
let home: string;

function warden(args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, WARDEN_HOME: home }, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'warden-cli-'));
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-cli.mjs')], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
});

afterAll(() => {
  warden(['sandbox', 'rm', name]);
  rmSync(home, { recursive: true, force: true });
});

describe.skipIf(!runscInstalled())('warden CLI with gVisor', () => {
  it('creates a runsc sandbox that inspect, exec and the ledger all call gVisor', () => {
    const doctor = warden(['doctor', '--json']);
    expect(doctor.status, doctor.stdout + doctor.stderr).toBe(0);
    expect(JSON.parse(doctor.stdout).connection.runtimes).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'runsc', works: true })]),
    );

    const created = warden(['sandbox', 'create', '--name', name, '--runtime', 'runsc', '--json']);
    expect(created.status, created.stderr).toBe(0);
    const info = JSON.parse(created.stdout);
    expect(info.runtime).toBe('runsc');
    expect(JSON.parse(warden(['sandbox', 'inspect', name, '--json']).stdout).runtime).toBe('runsc');

    const exec = warden(['exec', name, '--', 'sh', '-c', 'dmesg | head -n 1; exit 5']);
    expect(exec.status).toBe(5);
    expect(exec.stdout).toMatch(/Starting gVisor/);

    const ledger = openAuditLedger(home);
    try {
      const entries = ledger.entries({ sandboxId: info.id, kind: 'sandbox.created' });
      expect(entries).toHaveLength(1);
      expect(entries[0]!.payload).toMatchObject({ name, runtime: 'runsc' });
    } finally {
      ledger.close();
    }
    expect(warden(['sandbox', 'rm', name]).status).toBe(0);
  });
});
