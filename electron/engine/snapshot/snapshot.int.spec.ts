// Snapshots on real Podman, with one sandbox that has everything that makes them hard: its own user
// namespace, a loop-mounted disk for its root layer, and a host workspace lent to it. A reset brings
// back the snapshot's bytes (by sha256) in /workspace and in the root filesystem, with the ids the
// sandbox saw; a fork runs beside the original with the same bytes; each step is in the ledger, which verifies.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestWarden, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import { archiveDigest, restoreWorkspace } from './workspace-archive.js';
import { takeManifest, type Manifest } from '../diff/manifest.js';
import { collectExec } from '../podman/exec-session.js';
import { Gateway } from '../gateway/gateway.js';
import { loadPolicy } from '../gateway/policy-load.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import { localPodmanEnv } from '../podman/owned-service.js';

let w: TestWarden | undefined;
let hostDir: string;
const imageIds: string[] = [];
beforeAll(async () => {
  w = await openTestWarden();
  hostDir = mkdtempSync(join(tmpdir(), 'warden-snap-ws-'));
});
afterAll(async () => {
  await closeTestWarden(w);
  // Images a failed run left (its sandboxes are gone by now, so they are free to go).
  if (imageIds.length) spawnSync('podman', ['rmi', '-f', ...imageIds], { stdio: 'ignore' });
  rmSync(hostDir, { recursive: true, force: true });
});

const FILES = '/workspace/data.bin /workspace/sub/notes.txt /opt/x /tmp/owned';
const sums = async (ref: string) => {
  const info = await w!.engine.resolveSandbox(ref);
  const r = await w!.t.sh(info.id, `sha256sum ${FILES}; stat -c '%n %u:%g %a' /opt/x /tmp/owned; ls /workspace /opt`);
  expect(r.exitCode, r.err).toBe(0);
  return r.out;
};

describe('snapshots', () => {
  it('reset brings back the bytes, a fork runs beside the original, and every step is in the ledger', async () => {
    const { t, engine, ledger } = w!;
    const sb = await t.create({ workspace: hostDir });
    const setUp = await t.sh(
      sb.id,
      'mkdir -p /workspace/sub /opt && head -c 300000 /dev/urandom > /workspace/data.bin && echo notes > /workspace/sub/notes.txt' +
        ' && head -c 5000 /dev/urandom > /opt/x',
    );
    expect(setUp.exitCode, setUp.err).toBe(0);
    // A file of another uid (the sandbox's root cannot chown: it has no capabilities).
    const owned = await collectExec(t.engine.connection, sb.id, {
      cmd: 'echo mine > /tmp/owned && chmod 640 /tmp/owned',
      user: '1234:1234',
    });
    expect(owned.exitCode, owned.stderr.toString()).toBe(0);
    const before = await sums(sb.name);

    const snap = await engine.snapshots.snapshot(sb.name, 'before');
    imageIds.push(snap.imageId);
    // A person may run the image by hand: it carries its base image's entrypoint and command, not
    // Warden's keep-alive (a runner that is there only when Warden mounts it).
    const byHand = spawnSync(
      'podman',
      ['--runtime', 'runc', 'run', '--rm', '--network', 'none', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'].concat([
        snap.imageId,
        'wc',
        '-c',
        '/opt/x',
      ]),
      { encoding: 'utf8', env: localPodmanEnv() },
    );
    expect(byHand.stdout, byHand.stderr).toBe('5000 /opt/x\n');
    expect(snap).toMatchObject({ sandbox: sb.name, sandboxId: sb.id, tag: 'before', takenBy: 'tester' });
    expect(archiveDigest(engine.snapshots.store.archivePath(sb.name, 'before')).sha256).toBe(snap.workspaceSha256);
    expect(snap.workspaceBytes).toBeGreaterThan(300_000);
    expect(snap.rootBytes).toBeGreaterThan(5000);
    await expect(engine.snapshots.snapshot(sb.name, 'before')).rejects.toMatchObject({ code: 'E_CONFLICT' });

    const change = await t.sh(
      sb.id,
      'echo changed > /workspace/data.bin && rm -r /workspace/sub && echo new > /workspace/added && rm /opt/x && echo y > /opt/y',
    );
    expect(change.exitCode, change.err).toBe(0);
    expect(await sums(sb.name).catch(() => 'differs')).not.toBe(before);

    const reset = await engine.snapshots.reset(sb.name, 'before');
    expect(reset).toMatchObject({ name: sb.name, state: 'running', workspace: hostDir });
    expect(reset.id).not.toBe(sb.id);
    // Same bytes, same owners (1234 inside, not nobody), and what was added since is gone.
    expect(await sums(sb.name)).toBe(before);

    const fork = await engine.snapshots.fork(sb.name, 'before', `${sb.name}-fork`);
    expect(fork).toMatchObject({ name: `${sb.name}-fork`, state: 'running', workspace: null });
    expect(await sums(fork.name)).toBe(before);
    // Beside, not shared: a change in the fork leaves the original as it was.
    expect((await t.sh(fork.id, 'echo fork > /opt/x && echo fork > /workspace/data.bin')).exitCode).toBe(0);
    expect(await sums(sb.name)).toBe(before);
    expect((await engine.listSandboxes()).map((s) => s.name)).toEqual(expect.arrayContaining([sb.name, fork.name]));

    const listed = await engine.snapshots.list(sb.name);
    expect(listed.map((s) => s.tag)).toEqual(['before']);
    // The image is in use by the reset sandbox and the fork: removal says so and keeps everything.
    await expect(engine.snapshots.remove(sb.name, 'before')).rejects.toMatchObject({ code: 'E_CONFLICT' });
    await engine['sandbox.destroy']({ ref: fork.name });
    await engine['sandbox.destroy']({ ref: sb.name });
    await engine.snapshots.remove(sb.name, 'before');
    expect(await engine.snapshots.list(sb.name)).toEqual([]);
    const image = spawnSync('podman', ['image', 'exists', snap.imageId]);
    expect(image.status).toBe(1);

    const kinds = (id: string) => ledger.entries({ sandboxId: id }).map((e) => e.kind);
    expect(kinds(sb.id)).toEqual(expect.arrayContaining(['snapshot.taken', 'sandbox.destroyed', 'snapshot.removed']));
    expect(kinds(reset.id)).toEqual(expect.arrayContaining(['sandbox.created', 'sandbox.reset']));
    expect(kinds(fork.id)).toEqual(expect.arrayContaining(['sandbox.created', 'sandbox.forked']));
    const resetEntry = ledger.entries({ sandboxId: reset.id, kind: 'sandbox.reset' })[0]!;
    expect(resetEntry.payload).toMatchObject({
      name: sb.name,
      fromId: sb.id,
      tag: 'before',
      imageId: snap.imageId,
      workspaceSha256: snap.workspaceSha256,
    });
    expect(ledger.verify().ok).toBe(true);
  });

  it('an agent snapshots and resets only its own sandbox, and a fork counts against its sandboxes', async () => {
    const { t, engine, ledger, warden } = w!;
    const { policy } = loadPolicy(t.home);
    const gateway = new Gateway(engine, warden.audit, {
      policy: { ...policy, access: 'own', create: { ...policy.create, maxSandboxes: 1 } },
    });
    try {
      const bot = { agent: 'bot', runKey: 'snap-run' };
      const mine = await gateway.createSandbox(bot, { name: `t-${t.runId}-bot`, labels: { [TEST_LABEL_KEY]: t.runId } });
      expect((await gateway.exec(bot, mine.name, { cmd: 'echo kept > /workspace/k' })).exitCode).toBe(0);
      const snap = await gateway.snapshots.snapshot(bot, mine.name, 'b1');
      imageIds.push(snap.imageId);
      expect(snap.takenBy).toBe('bot');
      // Another agent's sandbox is "not found", whatever the verb.
      const other = { agent: 'other', runKey: null };
      await expect(gateway.snapshots.snapshot(other, mine.name, 'x')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      await expect(gateway.snapshots.reset(other, mine.name, 'b1')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      await expect(gateway.snapshots.list(other, mine.name)).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      // One sandbox is all policy gives bot here: a fork would be a second.
      await expect(gateway.snapshots.fork(bot, mine.name, 'b1', `t-${t.runId}-bot2`)).rejects.toMatchObject({ code: 'E_POLICY_DENIED' });

      expect((await gateway.exec(bot, mine.name, { cmd: 'rm /workspace/k' })).exitCode).toBe(0);
      const reset = await gateway.snapshots.reset(bot, mine.name, 'b1');
      // Still bot's (its label came back with it), in the same run, and the file is back.
      const back = await gateway.exec(bot, mine.name, { cmd: 'cat /workspace/k' });
      expect(back.exitCode).toBe(0);
      expect(ledger.entries({ sandboxId: reset.id, kind: 'sandbox.reset' })[0]!.actor).toBe('bot');
      expect(ledger.entries({ sandboxId: mine.id, kind: 'snapshot.taken' })[0]!.actor).toBe('bot');
      await gateway.destroySandbox(bot, mine.name);
      await gateway.snapshots.remove({ agent: 'user', trusted: true, runKey: null }, mine.name, 'b1');
      expect(ledger.verify().ok).toBe(true);
    } finally {
      gateway.close();
    }
  });

  it("a restore's baseline read from the archive is what walking the restored workspace gives, or it walks", async () => {
    const { t, engine } = w!;
    const sb = await t.create({});
    const long = `${'d'.repeat(60)}/${'e'.repeat(60)}/${'f'.repeat(70)}.txt`;
    const made = await t.sh(
      sb.id,
      [
        'cd /workspace && mkdir -p sub/deep empty-dir && echo text > sub/a.txt && : > sub/empty',
        'head -c 200000 /dev/urandom > big.bin && head -c 3000 /dev/urandom > small.bin && printf "x\\0y" > nul.bin',
        'ln -s sub/a.txt rel-link && ln -s /etc/passwd abs-link && ln sub/a.txt hard && mkfifo pipe',
        'echo run > sub/deep/run.sh && chmod 750 sub/deep/run.sh && chmod 4755 small.bin && echo u > "n\u00e9 file"',
        `mkdir -p "$(dirname ${long})" && echo long > ${long}`,
      ].join(' && '),
    );
    expect(made.exitCode, made.err).toBe(0);
    const snap = await engine.snapshots.snapshot(sb.name, 'manifest');
    imageIds.push(snap.imageId);
    const file = engine.snapshots.store.archivePath(sb.name, 'manifest');
    const sorted = (m: Manifest | null) => m && [...m.files].sort((a, b) => (a.path < b.path ? -1 : 1));
    const read = await restoreWorkspace(t.engine.connection, sb.id, file, snap.workspaceSha256);
    expect(read).not.toBeNull();
    expect(sorted(read)).toEqual(sorted(await takeManifest(t.engine.connection, sb.id)));
    expect(read!.files.map((f) => f.path)).toEqual(expect.arrayContaining([long, 'hard', 'pipe', 'abs-link', 'n\u00e9 file']));

    // What it does not read as the walker would (a sparse file: GNU tar's own member type): it walks instead.
    expect((await t.sh(sb.id, 'truncate -s 10M /workspace/sparse && echo x >> /workspace/sparse')).exitCode).toBe(0);
    const sparse = await engine.snapshots.snapshot(sb.name, 'sparse');
    imageIds.push(sparse.imageId);
    const archive = engine.snapshots.store.archivePath(sb.name, 'sparse');
    expect(await restoreWorkspace(t.engine.connection, sb.id, archive, sparse.workspaceSha256)).toBeNull();
    await engine['sandbox.destroy']({ ref: sb.name });
    for (const tag of ['sparse', 'manifest']) await engine.snapshots.remove(sb.name, tag);
  });
});
