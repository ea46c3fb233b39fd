// Red-team findings on snapshots, on real Podman. Snapshots are kept by sandbox name, and a name is
// free again once its sandbox is gone: another agent taking that name must not see, restore, fork or
// remove the first one's snapshots. And the workspace archive is whatever the sandbox streams: a
// sparse file or a flood must not fill the host's disk under WARDEN_HOME.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestWarden, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import { AGENT_LABEL, Gateway } from './gateway.js';
import { loadPolicy } from './policy-load.js';
import { MAX_AGENT_SNAPSHOTS } from './snapshot-verbs.js';

let w: TestWarden | undefined;
let gateway: Gateway | undefined;
const imageIds: string[] = [];
beforeAll(async () => {
  w = await openTestWarden();
  const { policy } = loadPolicy(w.t.home);
  gateway = new Gateway(w.engine, w.warden.audit, { policy: { ...policy, access: 'own', create: { ...policy.create, maxSandboxes: 3 } } });
});
afterAll(async () => {
  gateway?.close();
  await closeTestWarden(w);
  if (imageIds.length) spawnSync('podman', ['rmi', '-f', ...imageIds], { stdio: 'ignore' });
});

describe('snapshot verbs under attack', () => {
  it("an agent that takes a gone sandbox's name gets none of its snapshots, and an archive has a bound", async () => {
    const { t, engine } = w!;
    const g = gateway!;
    const name = `t-${t.runId}-reused`;
    const labels = { [TEST_LABEL_KEY]: t.runId };
    const bot = { agent: 'bot', runKey: null };
    const thief = { agent: 'thief', runKey: null };
    const user = { agent: 'user', trusted: true, runKey: null };

    const first = await g.createSandbox(bot, { name, labels });
    expect((await g.exec(bot, name, { cmd: 'echo secret > /workspace/s' })).exitCode).toBe(0);
    imageIds.push((await g.snapshots.snapshot(bot, name, 'b1')).imageId);
    await g.destroySandbox(bot, first.name);

    const second = await g.createSandbox(thief, { name, labels });
    expect(await g.snapshots.list(thief, name)).toEqual([]);
    await expect(g.snapshots.reset(thief, name, 'b1')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    await expect(g.snapshots.fork(thief, name, 'b1', `${name}-f`)).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    await expect(g.snapshots.remove(thief, name, 'b1')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    expect((await g.snapshots.list(user, name)).map((s) => s.tag)).toEqual(['b1']);
    expect((await engine.resolveSandbox(name)).id).toBe(second.id);

    // A sparse file of 64 MiB costs the sandbox nothing and the archive little; real bytes over the bound are refused whole.
    engine.snapshots.archiveMaxBytes = 1024 * 1024;
    expect((await g.exec(thief, name, { cmd: 'truncate -s 64M /workspace/sparse' })).exitCode).toBe(0);
    const sparse = await g.snapshots.snapshot(thief, name, 'sparse');
    imageIds.push(sparse.imageId);
    expect(sparse.workspaceBytes).toBeLessThan(1024 * 1024);
    expect((await g.exec(thief, name, { cmd: 'head -c 3000000 /dev/urandom > /workspace/big' })).exitCode).toBe(0);
    await expect(g.snapshots.snapshot(thief, name, 'big')).rejects.toMatchObject({ code: 'E_TOO_LARGE' });
    expect(existsSync(engine.snapshots.store.archivePath(name, 'sparse', 'thief'))).toBe(true);
    expect(existsSync(engine.snapshots.store.folder(name, 'big', 'thief'))).toBe(false);

    // Past twice its disk is a lying tar: 32 MiB of disk, 80 MB of stream.
    engine.snapshots.archiveMaxBytes = 1024 ** 3;
    const small = await g.createSandbox(thief, { name: `${name}-disk`, disk: 32 * 1024 * 1024, labels });
    const lie = 'printf "#!/bin/sh\\nexec head -c 80000000 /dev/zero\\n" > /usr/local/bin/tar && chmod 755 /usr/local/bin/tar';
    expect((await g.exec(thief, small.name, { cmd: lie })).exitCode).toBe(0);
    await expect(g.snapshots.snapshot(thief, small.name, 'lie')).rejects.toMatchObject({ code: 'E_TOO_LARGE' });
    await g.destroySandbox(thief, small.name);

    await g.destroySandbox(thief, name);
    await g.snapshots.remove(user, name, 'sparse');
    await g.snapshots.remove(user, name, 'b1');
  });

  it("F8: the next owner of a name takes the last one's tags as its own, never told of them; the user's view prefers the sandbox there now", async () => {
    const { t, engine } = w!;
    const g = gateway!;
    const name = `t-${t.runId}-tags`;
    const labels = { [TEST_LABEL_KEY]: t.runId };
    const bot = { agent: 'bot', runKey: null };
    const thief = { agent: 'thief', runKey: null };
    const user = { agent: 'user', trusted: true, runKey: null };

    await g.createSandbox(bot, { name, labels });
    expect((await g.exec(bot, name, { cmd: 'echo secret > /workspace/s' })).exitCode).toBe(0);
    const bots = await g.snapshots.snapshot(bot, name, 'before');
    imageIds.push(bots.imageId);
    await g.destroySandbox(bot, name);

    // The same name, another agent, the same tag: its own snapshot, not a conflict naming the bot's.
    await g.createSandbox(thief, { name, labels });
    const thiefs = await g.snapshots.snapshot(thief, name, 'before');
    imageIds.push(thiefs.imageId);
    expect(thiefs.imageId).not.toBe(bots.imageId);
    expect(thiefs.takenBy).toBe('thief');
    // A conflict among its own tags is still one, and names only its own.
    const again = g.snapshots.snapshot(thief, name, 'before');
    await expect(again).rejects.toMatchObject({ code: 'E_CONFLICT', message: `sandbox ${name} already has a snapshot tagged before` });
    expect((await g.snapshots.list(thief, name)).map((s) => [s.tag, s.takenBy])).toEqual([['before', 'thief']]);
    // The bot's is untouched: its image and archive are there, and the user sees both.
    expect(spawnSync('podman', ['image', 'exists', bots.imageId]).status).toBe(0);
    expect(existsSync(engine.snapshots.store.archivePath(name, 'before', 'bot'))).toBe(true);
    expect((await g.snapshots.list(user, name)).map((s) => s.takenBy)).toEqual(['bot', 'thief']);

    // The thief's reset goes to its own: the bot's secret does not come back.
    const reset = await g.snapshots.reset(thief, name, 'before');
    expect((await g.exec(thief, reset.name, { cmd: 'test -e /workspace/s' })).exitCode).toBe(1);
    await g.destroySandbox(thief, name);

    // The bot holds the name again: its own "before" is the one it and the user mean, though the thief's is newer.
    await g.createSandbox(bot, { name, labels });
    expect((await g.snapshots.list(bot, name)).map((s) => [s.tag, s.takenBy])).toEqual([['before', 'bot']]);
    expect((await g.snapshots.remove(user, name, 'before')).takenBy).toBe('bot');
    await expect(g.snapshots.remove(bot, name, 'before')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    await g.destroySandbox(bot, name);
    expect((await g.snapshots.remove(user, name, 'before')).takenBy).toBe('thief');
    expect(engine.snapshots.store.list(name)).toEqual([]);
  });

  it('a fork is a create by the agent: its own, counted, and within its create limits', async () => {
    const { t, engine } = w!;
    const { policy } = loadPolicy(t.home);
    const MiB = 1024 * 1024;
    const all = new Gateway(engine, w!.warden.audit, {
      policy: { ...policy, access: 'all', create: { ...policy.create, maxSandboxes: 1, maxMemoryBytes: 256 * MiB } },
    });
    const user = { agent: 'user', trusted: true, runKey: null };
    const bot = { agent: 'bot', runKey: null };
    const labels = { [TEST_LABEL_KEY]: t.runId };
    try {
      const small = await all.createSandbox(user, { name: `t-${t.runId}-small`, memory: 128 * MiB, labels });
      const big = await all.createSandbox(user, { name: `t-${t.runId}-big`, memory: 512 * MiB, labels });
      imageIds.push((await all.snapshots.snapshot(user, small.name, 's')).imageId);
      imageIds.push((await all.snapshots.snapshot(user, big.name, 's')).imageId);
      // More memory than the agent may ask for: refused, as its own create would be.
      await expect(all.snapshots.fork(bot, big.name, 's', `t-${t.runId}-f0`)).rejects.toMatchObject({ code: 'E_POLICY_DENIED' });
      const fork = await all.snapshots.fork(bot, small.name, 's', `t-${t.runId}-f1`);
      expect(fork.labels[AGENT_LABEL]).toBe('bot');
      // It is the agent's one sandbox: a second fork is over create.maxSandboxes.
      await expect(all.snapshots.fork(bot, small.name, 's', `t-${t.runId}-f2`)).rejects.toMatchObject({ code: 'E_POLICY_DENIED' });
      // Its own sandbox made again by a reset is its create too: under a policy tightened since, refused.
      imageIds.push((await all.snapshots.snapshot(bot, fork.name, 'f')).imageId);
      const strict = new Gateway(engine, w!.warden.audit, {
        policy: { ...policy, access: 'all', create: { ...policy.create, maxMemoryBytes: 64 * MiB } },
      });
      await expect(strict.snapshots.reset(bot, fork.name, 'f')).rejects.toMatchObject({ code: 'E_POLICY_DENIED' });
      strict.close();
      for (const name of [fork.name, small.name, big.name]) await all.destroySandbox(user, name);
      await all.snapshots.remove(user, fork.name, 'f');
      await all.snapshots.remove(user, small.name, 's');
      await all.snapshots.remove(user, big.name, 's');
    } finally {
      all.close();
    }
  });

  it('a reset drops the old sandbox’s baselines, and a reset or fork has its own: its diff starts there', async () => {
    const { t, engine } = w!;
    const g = gateway!;
    const bot = { agent: 'bot', runKey: 'diff-run' };
    const sb = await g.createSandbox(bot, { name: `t-${t.runId}-diffs`, labels: { [TEST_LABEL_KEY]: t.runId } });
    expect((await g.exec(bot, sb.name, { cmd: 'echo kept > /workspace/k' })).exitCode).toBe(0);
    imageIds.push((await g.snapshots.snapshot(bot, sb.name, 'd1')).imageId);
    expect(engine.changes.store.has('sandbox', sb.id)).toBe(true);
    const reset = await g.snapshots.reset(bot, sb.name, 'd1');
    expect(engine.changes.store.has('sandbox', sb.id)).toBe(false);
    expect(engine.changes.store.has('run', 'diff-run')).toBe(false);
    // A run is filed under one sandbox: the fork is made outside it.
    const fork = await g.snapshots.fork({ agent: 'bot', runKey: null }, sb.name, 'd1', `t-${t.runId}-diffs2`);
    for (const made of [reset, fork]) {
      expect((await engine.changes.diff('sandbox', made.id)).files).toEqual([]);
      expect((await g.exec({ agent: 'bot', runKey: null }, made.name, { cmd: 'echo new > /workspace/n' })).exitCode).toBe(0);
      expect((await engine.changes.diff('sandbox', made.id)).files.map((f) => [f.path, f.change])).toEqual([['n', 'added']]);
    }
    await g.destroySandbox({ agent: 'bot', runKey: null }, fork.name);
    await g.destroySandbox(bot, sb.name);
    await g.snapshots.remove({ agent: 'user', trusted: true, runKey: null }, sb.name, 'd1');
  });

  it('an agent keeps at most MAX_AGENT_SNAPSHOTS snapshots, over all its sandboxes, gone ones too', async () => {
    const { t, engine } = w!;
    const g = gateway!;
    const hoarder = { agent: 'hoarder', runKey: null };
    const sb = await g.createSandbox(hoarder, { name: `t-${t.runId}-hoard`, labels: { [TEST_LABEL_KEY]: t.runId } });
    // Snapshots of a sandbox of its that is gone, as a loop of create, snapshot, destroy leaves them.
    const gone = `t-${t.runId}-gone`;
    const store = engine.snapshots.store;
    for (let i = 0; i < MAX_AGENT_SNAPSHOTS; i++) {
      store.begin(gone, `h${i}`, 'hoarder');
      store.finish({
        sandbox: gone,
        sandboxId: 'f'.repeat(64),
        tag: `h${i}`,
        createdAt: new Date().toISOString(),
        image: 'none',
        imageId: 'none',
        rootBytes: 0,
        workspaceSha256: '0'.repeat(64),
        workspaceBytes: 0,
        takenBy: 'hoarder',
        spec: { memory: 1, cpus: 1, pids: 1, network: 'none', readOnlyRoot: false, labels: { [AGENT_LABEL]: 'hoarder' } },
      });
    }
    await expect(g.snapshots.snapshot(hoarder, sb.name, 'one-more')).rejects.toMatchObject({ code: 'E_POLICY_DENIED' });
    store.abandon(gone, 'h0', 'hoarder');
    imageIds.push((await g.snapshots.snapshot(hoarder, sb.name, 'one-more')).imageId);
    for (let i = 1; i < MAX_AGENT_SNAPSHOTS; i++) store.abandon(gone, `h${i}`, 'hoarder');
    await g.destroySandbox(hoarder, sb.name);
    await g.snapshots.remove({ agent: 'user', trusted: true, runKey: null }, sb.name, 'one-more');
  });
});
