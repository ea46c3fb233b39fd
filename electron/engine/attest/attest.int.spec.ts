// Attestation against a real Podman: a fresh sandbox's promises hold (each check ok, or skipped
// with its reason), the checks follow what was promised (network, read-only root), the ledger holds
// sandbox.attested, a sandbox whose labels promise less than its real limits fails, and --deep
// meets the pids limit and leaves the sandbox running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeTestWarden, openTestWarden, type TestEngine, type TestWarden } from '../../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import { createTampered } from '../../test-support/tampered-sandbox.js';
import { parseRequest } from '../../../shared/contracts/validate.js';
import type { Attestation } from '../../../shared/types/attestation.js';
import type { WardenEngine } from '../engine.js';
import type { Ledger } from '../ledger/index.js';

const MiB = 1024 * 1024;
let t: TestEngine;
let ledger: Ledger;
let engine: WardenEngine;
let warden: TestWarden | undefined;
beforeAll(async () => {
  warden = await openTestWarden();
  ({ t, ledger, engine } = warden);
});
afterAll(() => closeTestWarden(warden));

const spec = (extra: Record<string, unknown> = {}) => parseRequest('sandbox.create', { labels: { [TEST_LABEL_KEY]: t.runId }, ...extra });
const check = (a: Attestation, id: string) => a.checks.find((c) => c.id === id)!;
const failed = (a: Attestation) => a.checks.filter((c) => !c.ok).map((c) => `${c.id}: ${c.evidence}`);

/** The automatic attestation of a sandbox, as the engine event delivers it. */
function nextAttested(id: string): Promise<Attestation> {
  return new Promise((resolve) => {
    const off = engine.events.on('sandbox.attested', (a) => {
      if (a.sandboxId !== id) return;
      off();
      resolve(a);
    });
  });
}

describe('attestation', () => {
  it('attests a fresh sandbox after create, off the create’s path, and records it', async () => {
    let landed: Attestation | null = null;
    const off = engine.events.on('sandbox.attested', (a) => (landed = a));
    const sb = await engine['sandbox.create'](spec());
    // create has returned; its attestation is still to come (it runs in the background).
    expect(landed).toBeNull();
    expect(engine.attestations.latestFor(sb.id)).toBeNull();
    const auto = landed ?? (await nextAttested(sb.id));
    off();
    expect(failed(auto)).toEqual([]);
    expect(auto.actor).toBe('system');
    for (const c of auto.checks) expect(c.evidence.length).toBeGreaterThan(0);
    expect(auto.checks.filter((c) => c.skipped).map((c) => c.id)).toEqual(['read-only-root']);
    expect(check(auto, 'user-namespace').evidence).toMatch(/^uid_map 0 \d+ 65536$/);
    expect(check(auto, 'memory-limit').evidence).toContain('host’s cgroup says 512 MiB');
    expect(check(auto, 'network').evidence).toBe('interfaces: lo');
    expect(await engine['sandbox.attestation']({ ref: sb.name })).toEqual(auto);

    const asked = await engine['sandbox.attest']({ ref: sb.name });
    expect(asked).toMatchObject({ ok: true, actor: 'tester', deep: false });
    const recorded = ledger.entries({ sandboxId: sb.id, kind: 'sandbox.attested' });
    expect(recorded.map((e) => [e.actor, (e.payload as { ok: boolean }).ok])).toEqual([
      ['system', true],
      ['tester', true],
    ]);
    expect((recorded[1]!.payload as { checks: unknown[] }).checks).toEqual(asked.checks);
  });

  it('follows the promise: nat has interfaces, a read-only root refuses a write, a workspace is the one host mount', async () => {
    const nat = await engine['sandbox.create'](spec({ network: 'nat' }));
    const a = await engine['sandbox.attest']({ ref: nat.name });
    expect(failed(a)).toEqual([]);
    expect(check(a, 'network').evidence).toMatch(/interfaces: .*lo.*,|interfaces: \w+, lo/);
    const ro = await engine['sandbox.create'](spec({ readOnlyRoot: true }));
    const b = await engine['sandbox.attest']({ ref: ro.name });
    expect(failed(b)).toEqual([]);
    expect(check(b, 'read-only-root')).toMatchObject({ ok: true, evidence: expect.stringContaining('Read-only file system') });
    expect(check(b, 'read-only-root').skipped).toBeUndefined();
    // A workspace is the one host mount allowed, and only when promised.
    const dir = mkdtempSync(join(tmpdir(), 'warden-attest-ws-'));
    try {
      const ws = await engine['sandbox.create'](spec({ workspace: dir }));
      const c = await engine['sandbox.attest']({ ref: ws.name });
      expect(failed(c)).toEqual([]);
      expect(check(c, 'mounts').promise).toBe(`only the workspace (${dir}) is mounted from the host`);
      expect(check(c, 'mounts').evidence).toContain('beyond /workspace and Podman’s own files');
      await engine['sandbox.destroy']({ ref: ws.name });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails a sandbox whose real memory limit is not the one it promises, naming both', async () => {
    // Labels say 256 MiB, the container really has 512 MiB.
    const name = `t-${t.runId}-tampered`;
    await createTampered(t, name, 256 * MiB, 512 * MiB);
    const a = await engine['sandbox.attest']({ ref: name });
    expect(a.ok).toBe(false);
    expect(failed(a)).toHaveLength(1);
    expect(check(a, 'memory-limit').ok).toBe(false);
    expect(check(a, 'memory-limit').evidence).toMatch(/sandbox sees 512 MiB.*host’s cgroup says 512 MiB.*promised 256 MiB/);
  });

  it('--deep meets the pids and memory limits in children and the sandbox lives on', async () => {
    const sb = await engine['sandbox.create'](spec({ pids: 64, memory: '96m' }));
    const a = await engine['sandbox.attest']({ ref: sb.name, deep: true });
    expect(failed(a)).toEqual([]);
    expect(check(a, 'deep.pids').evidence).toMatch(/fork refused after \d+ more processes/);
    expect(check(a, 'deep.memory').evidence).toMatch(/killed by the OOM killer|MemoryError/);
    expect(check(a, 'deep.userns').evidence).toContain('Operation not permitted');
    expect(check(a, 'deep.cgroup-write').ok).toBe(true);
    expect(check(a, 'deep.disk')).toMatchObject({ skipped: true, evidence: expect.stringContaining('not tried') });
    expect((await engine['sandbox.inspect']({ ref: sb.name })).state).toBe('running');
    // and nothing of the tries is left: only the init, the keep-alive and this shell's ps
    const left = await engine['exec.run'](parseRequest('exec.run', { ref: sb.name, request: { cmd: 'ls -d /proc/[0-9]* | wc -l' } }));
    expect(Number(Buffer.from(left.stdoutBase64, 'base64').toString())).toBeLessThan(8);
  });

  it('refuses to attest a stopped sandbox with a clear error', async () => {
    const sb = await engine['sandbox.create'](spec());
    await engine.attestations.idle();
    await engine['sandbox.stop']({ ref: sb.name });
    await expect(engine['sandbox.attest']({ ref: sb.name })).rejects.toMatchObject({
      code: 'E_BAD_INPUT',
      message: expect.stringContaining('only a running sandbox'),
    });
  });

  it('passes a gVisor (runsc) sandbox, plain and deep, and it keeps running', async (c) => {
    const runsc = t.engine.info().runtimes.find((r) => r.name === 'runsc');
    if (!runsc?.works) return c.skip(`runsc does not run here: ${runsc?.reason ?? 'not detected'}`);
    const sb = await engine['sandbox.create'](spec({ runtime: 'runsc', name: `t-${t.runId}-gvisor` }));
    const plain = await engine['sandbox.attest']({ ref: sb.id });
    expect(failed(plain)).toEqual([]);
    expect(check(plain, 'runtime').evidence).toContain('Starting gVisor');
    const deep = await engine['sandbox.attest']({ ref: sb.id, deep: true });
    expect(failed(deep)).toEqual([]);
    expect((await engine['sandbox.inspect']({ ref: sb.id })).state).toBe('running');
  });
});
