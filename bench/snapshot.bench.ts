// Snapshot, reset and workspace diff speed (issue 16), against doing the same by hand with the podman
// CLI in the same run.  npm run bench snapshot
// Each snapshot/reset repetition starts from a fresh sandbox with the same bytes written (not timed),
// so no run commits on top of an earlier snapshot's layers; ours and by-hand runs are interleaved.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodmanEngine } from '../electron/engine/podman/podman-engine.js';
import { openWarden } from '../electron/engine/open-warden.js';
import { hostLimits } from '../electron/engine/podman/host-limits.js';
import { sandboxRlimits } from '../electron/engine/podman/container-spec.js';
import { restoreWorkspace } from '../electron/engine/snapshot/workspace-archive.js';
import { SandboxSpecSchema } from '../shared/types/sandbox.js';
import { machineLine, summarize, writeResultsSection } from './results-file.js';

const RUNS = Number(process.env.BENCH_SNAPSHOT_RUNS ?? 4);
const DIFF_RUNS = Number(process.env.BENCH_DIFF_RUNS ?? 10);
/** 100 MB in /workspace, 50 MB elsewhere in the root filesystem (issue 16's sizes). */
const WRITE =
  'head -c 104857600 /dev/urandom > /workspace/data.bin && mkdir -p /opt/bench && head -c 52428800 /dev/urandom > /opt/bench/root.bin';

const home = mkdtempSync(join(tmpdir(), 'warden-bench-snap-'));
const archiveDir = mkdtempSync(join(tmpdir(), 'warden-bench-snap-hand-'));
const localEnv = { ...process.env };
delete localEnv.CONTAINER_HOST;
const fmt = (n: number) => n.toFixed(2);

function podman(args: string[], input?: { stdinFile?: string; stdoutFile?: string }): void {
  const sh = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const redirect = input?.stdinFile ? ` < ${sh(input.stdinFile)}` : input?.stdoutFile ? ` > ${sh(input.stdoutFile)}` : '';
  const r = spawnSync('sh', ['-c', `podman ${args.map(sh).join(' ')}${redirect}`], { env: localEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`podman ${args.join(' ')} failed: ${r.stderr.toString()}`);
}

const podmanEngine = await PodmanEngine.open({ home });
const whole = await openWarden(home, { podman: podmanEngine, actor: 'bench', gateway: false });
const warden = whole.engine;
const runtime = podmanEngine.info().defaultRuntime!;
const image = podmanEngine.sandboxes.defaultImage;
const runArgs = ['--runtime', runtime, ...sandboxRlimits(hostLimits()).flatMap((l) => ['--ulimit', `${l.type}=${l.soft}:${l.hard}`])];
const leftImages = new Set<string>();
const leftSandboxes = new Set<string>();

async function sh(ref: string, cmd: string): Promise<void> {
  const r = await warden.execStream(ref, { cmd });
  if (r.exitCode !== 0) throw new Error(`exec in ${ref} failed (exit ${r.exitCode}): ${cmd.slice(0, 80)}`);
}

/** One repetition through the engine: snapshot, then reset to it (seconds each). */
async function ours(i: number): Promise<{ snapshot: number; reset: number; restore: number; walk: number }> {
  const name = `bench-snap-${i}`;
  const sb = await warden['sandbox.create'](SandboxSpecSchema.parse({ name }));
  leftSandboxes.add(name);
  await sh(name, WRITE);
  let t = performance.now();
  const snap = await warden.snapshots.snapshot(name, 'bench');
  const snapshot = (performance.now() - t) / 1000;
  leftImages.add(snap.imageId);
  t = performance.now();
  const after = await warden.snapshots.reset(name, 'bench');
  const reset = (performance.now() - t) / 1000;
  for (const id of [sb.id, after.id]) await warden.attestations.settle(id).catch(() => undefined);
  // Where the reset's time goes, after the timed run: its two steps past the create, done again.
  t = performance.now();
  await restoreWorkspace(podmanEngine.connection, after.id, warden.snapshots.store.archivePath(name, 'bench'), snap.workspaceSha256);
  const restore = (performance.now() - t) / 1000;
  // The walk a restore no longer needs (its baseline is read from the archive as it streams), for comparison.
  t = performance.now();
  await warden.changes.atCreate(after, true);
  const walk = (performance.now() - t) / 1000;
  await warden['sandbox.destroy']({ ref: name });
  leftSandboxes.delete(name);
  await warden.snapshots.remove(name, 'bench');
  leftImages.delete(snap.imageId);
  return { snapshot, reset, restore, walk };
}

/** The same by hand: `podman commit` + tar of /workspace; `podman rm -f` + `podman run` of the image + untar. */
function byHand(i: number): { snapshot: number; reset: number } {
  const name = `bench-snap-hand-${i}`;
  const tag = `localhost/warden-bench-hand:${i}`;
  const archive = join(archiveDir, `${i}.tar`);
  const run = (from: string) => podman(['run', '-d', '--name', name, ...runArgs, '--network', 'none', from, 'sleep', 'infinity']);
  run(image);
  podman(['exec', name, 'sh', '-c', WRITE]);
  let t = performance.now();
  podman(['commit', '--pause', name, tag]);
  podman(['exec', name, 'tar', '-C', '/workspace', '-cf', '-', '.'], { stdoutFile: archive });
  const snapshot = (performance.now() - t) / 1000;
  t = performance.now();
  podman(['rm', '-f', '-t', '0', name]);
  run(tag);
  podman(['exec', '-i', name, 'tar', '-C', '/workspace', '-xf', '-'], { stdinFile: archive });
  const reset = (performance.now() - t) / 1000;
  podman(['rm', '-f', '-t', '0', name]);
  podman(['rmi', tag]);
  rmSync(archive, { force: true });
  return { snapshot, reset };
}

/** p50 of diffs of a 10,000-file workspace with 100 changed, against the baseline a create takes. */
async function diffs(): Promise<{ p50: number; p95: number; n: number; changed: number }> {
  const name = 'bench-diff';
  const sb = await warden['sandbox.create'](SandboxSpecSchema.parse({ name }));
  leftSandboxes.add(name);
  await sh(name, 'i=0; while [ $i -lt 10000 ]; do d=/workspace/d$((i % 100)); mkdir -p $d; echo "file $i" > $d/f$i; i=$((i+1)); done');
  // The baseline a create of a sandbox with a full /workspace takes (a reset's or fork's walk).
  await warden.changes.atCreate({ id: sb.id, workspace: null }, true);
  await sh(name, 'i=0; while [ $i -lt 100 ]; do echo changed >> /workspace/d$((i % 100))/f$i; i=$((i+1)); done');
  const samples: number[] = [];
  let changed = 0;
  for (let i = -1; i < DIFF_RUNS; i++) {
    const t = performance.now();
    const d = await warden.changes.diff('sandbox', sb.id);
    if (i >= 0) samples.push(performance.now() - t);
    changed = d.totals.modified + d.totals.added + d.totals.deleted;
  }
  if (changed !== 100) throw new Error(`the diff found ${changed} changed files, not 100`);
  await warden['sandbox.destroy']({ ref: name });
  leftSandboxes.delete(name);
  return { ...summarize(samples), changed };
}

try {
  const steps = { restore: [] as number[], walk: [] as number[] };
  const timed = { ours: { snapshot: [] as number[], reset: [] as number[] }, hand: { snapshot: [] as number[], reset: [] as number[] } };
  for (let i = 0; i < RUNS; i++) {
    const a = await ours(i);
    const b = byHand(i);
    steps.restore.push(a.restore);
    steps.walk.push(a.walk);
    timed.ours.snapshot.push(a.snapshot);
    timed.ours.reset.push(a.reset);
    timed.hand.snapshot.push(b.snapshot);
    timed.hand.reset.push(b.reset);
    console.log(
      `run ${i}: ours snapshot ${fmt(a.snapshot)} s reset ${fmt(a.reset)} s (restore ${fmt(a.restore)}, walk ${fmt(a.walk)}); by hand ${fmt(b.snapshot)} s / ${fmt(b.reset)} s`,
    );
  }
  const s = {
    oursSnap: summarize(timed.ours.snapshot),
    oursReset: summarize(timed.ours.reset),
    handSnap: summarize(timed.hand.snapshot),
    handReset: summarize(timed.hand.reset),
  };
  const restoreP50 = summarize(steps.restore).p50;
  const walkP50 = summarize(steps.walk).p50;
  const d = await diffs();
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  console.log(
    `snapshot p50 ${fmt(s.oursSnap.p50)} s vs ${fmt(s.handSnap.p50)} s (${ratio(s.oursSnap.p50, s.handSnap.p50)}×); reset p50 ${fmt(s.oursReset.p50)} s vs ${fmt(s.handReset.p50)} s (${ratio(s.oursReset.p50, s.handReset.p50)}×); diff p50 ${d.p50.toFixed(1)} ms`,
  );
  writeResultsSection(
    'snapshot',
    `## Snapshots, reset and workspace diff

${machineLine()} n=${RUNS} each, interleaved; each repetition a fresh sandbox with 100 MB of random bytes in /workspace and 50 MB in /opt (written through the engine's exec, not timed).
Ours is \`engine.snapshots.snapshot\` / \`reset\` (ledger entries, id mapping, the reset's workspace baseline for the diff included); by hand is \`podman commit --pause\` + \`podman exec NAME tar -C /workspace -cf - . > file\`, then \`podman rm -f\` + \`podman run -d\` of the committed image + \`podman exec -i NAME tar -xf - < file\`, on the same image and runtime.

| | ours p50 / p95 (s) | by hand p50 / p95 (s) | ratio p50 | target |
|---|---|---|---|---|
| snapshot | ${fmt(s.oursSnap.p50)} / ${fmt(s.oursSnap.p95)} | ${fmt(s.handSnap.p50)} / ${fmt(s.handSnap.p95)} | ${ratio(s.oursSnap.p50, s.handSnap.p50)} | ≤ 1.2 |
| reset | ${fmt(s.oursReset.p50)} / ${fmt(s.oursReset.p95)} | ${fmt(s.handReset.p50)} / ${fmt(s.handReset.p95)} | ${ratio(s.oursReset.p50, s.handReset.p50)} | ≤ 1.2 |

Where ours goes (p50, from a pass after each timed reset that does its steps again): the workspace restore (one exec: /workspace emptied, then the archive streamed on its stdin into the sandbox's tar, hashed on the way and checked against the snapshot's sha256, the diff's baseline read from it as it passes) ${fmt(restoreP50)} s; the rest (destroy, create from the snapshot image, ledger) ${fmt(s.oursReset.p50 - restoreP50)} s. The walk of the restored workspace that a reset took before (a sha256 of every file in the sandbox, for the diff's baseline) would add ${fmt(walkP50)} s. By hand the archive goes in as one \`podman exec -i\` stream (no check, no emptying first) and nothing is walked; Warden's sandbox also has its own loop-mounted disk, which \`podman run\` does not. Load average at the start: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')} (2 cores shared with other work).

Workspace diff (\`engine.changes.diff('sandbox', id)\`): 10,000 files in 100 folders, 100 changed after the baseline, n=${d.n}: p50 ${d.p50.toFixed(1)} ms, p95 ${d.p95.toFixed(1)} ms (target p50 ≤ 500 ms).`,
  );
} finally {
  for (const name of leftSandboxes) await warden['sandbox.destroy']({ ref: name }).catch(() => undefined);
  spawnSync('sh', ['-c', 'podman rm -f -t 0 $(podman ps -aq --filter name=bench-snap-hand-) 2>/dev/null'], {
    env: localEnv,
    stdio: 'ignore',
  });
  spawnSync('sh', ['-c', 'podman rmi -f $(podman images -q localhost/warden-bench-hand) 2>/dev/null'], { env: localEnv, stdio: 'ignore' });
  if (leftImages.size) spawnSync('podman', ['rmi', '-f', ...leftImages], { env: localEnv, stdio: 'ignore' });
  whole.close();
  podmanEngine.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(archiveDir, { recursive: true, force: true });
}
