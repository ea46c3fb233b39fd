// Automatic snapshots on real Podman: policy's snapshots.onRunStart takes one before an agent run's
// first changing call (and the run record names it, so "undo this run" is a reset to it); a
// snapshot-then-allow rule takes one before the command; a snapshot that cannot be taken refuses the
// command (it never runs unprotected); automatic snapshots are pruned past keepAutomatic, never one
// taken by asking. Each step is in the ledger, which verifies.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicySchema } from '../../../shared/types/policy.js';
import { closeTestWarden, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import { Gateway } from './gateway.js';
import { loadPolicy } from './policy-load.js';

let w: TestWarden | undefined;
let gateway: Gateway | undefined;
const images = new Set<string>();
beforeAll(async () => {
  w = await openTestWarden();
  const { policy } = loadPolicy(w.t.home);
  gateway = new Gateway(w.engine, w.warden.audit, {
    policy: PolicySchema.parse({
      ...policy,
      commands: {
        ...policy.commands,
        rules: [
          { command: 'rm', args: '-*r*', action: 'snapshot-then-allow', reason: 'recursive deletes can be undone' },
          ...policy.commands.rules,
        ],
      },
      snapshots: { onRunStart: true, keepAutomatic: 2 },
    }),
  });
});
afterAll(async () => {
  gateway?.close();
  await closeTestWarden(w);
  if (images.size) spawnSync('podman', ['rmi', '-f', ...images], { stdio: 'ignore' });
});

const user = { agent: 'user', trusted: true, runKey: null };
const payload = (e: { payload: unknown }) => e.payload as Record<string, unknown>;

describe('automatic snapshots', () => {
  it('a run starts from a snapshot it can be undone to; snapshot-then-allow snapshots before the command; a failed one refuses it', async () => {
    const { engine, ledger, t } = w!;
    const g = gateway!;
    const setup = { agent: 'bot', runKey: 'auto-setup' };
    const sb = await g.createSandbox(setup, { name: `t-${t.runId}-auto`, labels: { [TEST_LABEL_KEY]: t.runId } });
    // The run that made the sandbox has nothing before it to snapshot.
    expect(
      (await g.exec(setup, sb.name, { cmd: 'mkdir -p /workspace/d && echo keep > /workspace/d/f && echo v1 > /workspace/a' })).exitCode,
    ).toBe(0);
    const setupRun = g.runs.detail((await g.exec(setup, sb.name, { cmd: 'true' })).runId);
    expect(setupRun.startSnapshot).toBeUndefined();
    expect(engine.snapshots.store.list(sb.name)).toEqual([]);

    // A new run: its first changing call is preceded by the run-start snapshot.
    const bot = { agent: 'bot', runKey: 'auto-work' };
    const first = await g.exec(bot, sb.name, { cmd: 'echo v2 > /workspace/a && echo new > /workspace/added' });
    expect(first.exitCode).toBe(0);
    const run = await g['run.get']({ id: first.runId });
    expect(run.startSnapshot).toEqual({ sandbox: sb.name, tag: `${run.id}-start`, reason: 'run-start' });
    const start = engine.snapshots.store.get(sb.name, `${run.id}-start`);
    images.add(start.imageId);
    expect(start.automatic).toEqual({ reason: 'run-start', runId: run.id, callId: run.toolCalls[0]!.id });
    expect(run.toolCalls[0]!.decision).toMatchObject({ action: 'allow', snapshot: { tag: `${run.id}-start`, reason: 'run-start' } });
    // Its snapshot.taken is one of the call's entries, before the decision that let the command run.
    const seqs = run.toolCalls[0]!.ledgerSeqs;
    const kinds = seqs.map((s) => ledger.entries({ sandboxId: sb.id }).find((e) => e.seq === s)?.kind);
    expect(kinds.slice(0, 2)).toEqual(['snapshot.taken', 'policy.allowed']);

    // snapshot-then-allow: a snapshot named after the run and call, then the command.
    const rm = await g.exec(bot, sb.name, { cmd: 'rm -rf /workspace/d' });
    expect(rm.exitCode).toBe(0);
    const rmCall = g.runs.detail(run.id).toolCalls.find((c) => c.id === rm.callId)!;
    const rmTag = `${run.id}-call${rmCall.index}`;
    expect(rmCall.decision).toMatchObject({
      action: 'allow',
      source: 'snapshot-then-allow rm [-*r*]',
      snapshot: { tag: rmTag, reason: 'command' },
    });
    const rmSnap = engine.snapshots.store.get(sb.name, rmTag);
    images.add(rmSnap.imageId);
    expect(rmSnap.automatic).toEqual({ reason: 'command', runId: run.id, callId: rm.callId });
    const allowed = ledger.entries({ sandboxId: sb.id, kind: 'policy.allowed' }).find((e) => payload(e).callId === rm.callId)!;
    expect(payload(allowed).decision).toMatchObject({ snapshot: { tag: rmTag } });
    const taken = ledger.entries({ sandboxId: sb.id, kind: 'snapshot.taken' }).find((e) => payload(e).tag === rmTag)!;
    expect(taken).toMatchObject({ actor: 'bot', payload: { automatic: { reason: 'command', runId: run.id, callId: rm.callId } } });
    expect(taken.seq).toBeLessThan(allowed.seq);

    // The rm's snapshot brings d back; the run's start snapshot undoes the whole run.
    const afterRm = await g.snapshots.reset(user, sb.name, rmTag);
    images.add(rmSnap.imageId);
    expect((await t.sh(afterRm.id, 'cat /workspace/d/f /workspace/a')).out).toBe('keep\nv2\n');
    const undone = await g.snapshots.reset(user, sb.name, `${run.id}-start`);
    const back = await t.sh(undone.id, 'cat /workspace/d/f /workspace/a; ls /workspace');
    expect(back.out).toBe('keep\nv1\na\nd\n');

    // A snapshot that cannot be taken refuses the command: it does not run unprotected.
    const other = { agent: 'bot', runKey: 'auto-fail' };
    expect((await g.exec(other, sb.name, { cmd: 'true' })).exitCode).toBe(0); // its run-start snapshot
    const failRun = g.runs.detail((await g.exec(other, sb.name, { cmd: 'true' })).runId);
    images.add(engine.snapshots.store.get(sb.name, failRun.startSnapshot!.tag).imageId);
    const bound = engine.snapshots.archiveMaxBytes;
    engine.snapshots.archiveMaxBytes = 1; // the archive is over its bound: the snapshot fails (E_TOO_LARGE)
    try {
      await expect(g.exec(other, sb.name, { cmd: 'rm -rf /workspace/d; touch /workspace/ran' })).rejects.toMatchObject({
        code: 'E_POLICY_DENIED',
        message: expect.stringContaining('the call was not run unprotected'),
      });
    } finally {
      engine.snapshots.archiveMaxBytes = bound;
    }
    const still = await t.sh(undone.id, 'ls /workspace');
    expect(still.out).toBe('a\nd\n');
    const refused = g.runs.detail(failRun.id).toolCalls.at(-1)!;
    expect(refused).toMatchObject({ status: 'denied', decision: { action: 'deny', denyReason: 'snapshot-failed' } });
    const denied = ledger.entries({ sandboxId: undone.id, kind: 'policy.denied' }).at(-1)!;
    expect(denied.payload).toMatchObject({ callId: refused.id, decision: { denyReason: 'snapshot-failed' } });

    // Bounded: keepAutomatic is 2, so the oldest automatic ones went; a snapshot taken by asking stays.
    const manual = await g.snapshots.snapshot({ agent: 'bot', runKey: 'auto-manual' }, sb.name, 'mine');
    images.add(manual.imageId);
    for (let i = 0; i < 3; i++)
      expect((await g.exec(other, sb.name, { cmd: `mkdir -p /workspace/x${i} && rm -r /workspace/x${i}` })).exitCode).toBe(0);
    const kept = engine.snapshots.store.list(sb.name);
    for (const m of kept) images.add(m.imageId);
    const automatic = kept.filter((m) => m.automatic);
    // The newest stays; the sandbox runs on the run-start one's image, so that one cannot go yet and counts.
    expect(automatic.length).toBe(2);
    expect(automatic.map((m) => m.tag)).toEqual([`${run.id}-start`, expect.stringMatching(/-call\d+$/)]);
    expect(automatic[1]!.automatic!.runId).toBe(g.runs.detail(failRun.id).id);
    expect(kept.map((m) => m.tag)).toContain('mine');
    const pruned = ledger.entries({ kind: 'snapshot.removed' }).filter((e) => payload(e).name === sb.name);
    expect(pruned.length).toBeGreaterThan(0);
    expect(pruned.every((e) => String(payload(e).why).includes('snapshots.keepAutomatic'))).toBe(true);

    await g.destroySandbox({ agent: 'bot', runKey: null }, sb.name);
    // Newest first: a snapshot taken of a sandbox reset to an older one is built on that one's image.
    for (const m of engine.snapshots.store.list(sb.name).reverse()) await engine.snapshots.remove(sb.name, m.tag);
    expect(ledger.verify().ok).toBe(true);
  });
});
