// Engine speed against the podman CLI a user would otherwise use, measured in the same run.
//   npm run bench engine
import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodmanEngine } from '../electron/engine/podman/podman-engine.js';
import { runExec } from '../electron/engine/podman/exec-session.js';
import { SandboxSpecSchema } from '../shared/types/sandbox.js';
import { hostLimits } from '../electron/engine/podman/host-limits.js';
import { sandboxRlimits } from '../electron/engine/podman/container-spec.js';
import { machineLine, summarize, writeResultsSection } from './results-file.js';

const READY_RUNS = Number(process.env.BENCH_READY_RUNS ?? 20);
const EXEC_RUNS = Number(process.env.BENCH_EXEC_RUNS ?? 50);
const THROUGHPUT_MB = 200;

const home = mkdtempSync(join(tmpdir(), 'warden-bench-'));
const localEnv = { ...process.env };
delete localEnv.CONTAINER_HOST;

function podmanArgs(runtime: string): string[] {
  // The same runtime and ulimits Warden uses, or the CLI would not start a container on this host at all.
  const ulimits = sandboxRlimits(hostLimits()).flatMap((l) => ['--ulimit', `${l.type}=${l.soft}:${l.hard}`]);
  return ['--runtime', runtime, ...ulimits];
}

function timeCli(args: string[]): number {
  const started = performance.now();
  const r = spawnSync('podman', args, { env: localEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`podman ${args.join(' ')} failed: ${r.stderr.toString()}`);
  return ms;
}

function timeCliToDevNull(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('podman', args, { env: localEnv, stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`podman exited ${code}`))));
  });
}

const fmt = (n: number) => n.toFixed(1);
const row = (what: string, ours: { p50: number; p95: number }, base: { p50: number; p95: number }, target: string) =>
  `| ${what} | ${fmt(ours.p50)} / ${fmt(ours.p95)} | ${fmt(base.p50)} / ${fmt(base.p95)} | ${(ours.p50 / base.p50).toFixed(2)} / ${(ours.p95 / base.p95).toFixed(2)} | ${target} |`;

async function main(): Promise<void> {
  const engine = await PodmanEngine.open({ home });
  const runtime = engine.info().defaultRuntime!;
  const image = engine.sandboxes.defaultImage;
  console.log(`engine: Podman ${engine.info().version}, runtime ${runtime}, ${engine.info().source}`);

  // Warm both paths once (image layers in page cache, runtime services up).
  const warm = await engine.sandboxes.create(SandboxSpecSchema.parse({ name: 'bench-warm' }));
  await runExec(engine.connection, warm.id, { cmd: ['true'] });
  await engine.sandboxes.destroy(warm.id);
  timeCli(['run', '--rm', ...podmanArgs(runtime), '--network', 'none', image, 'true']);

  // 1. Sandbox ready: create + start + first `true` finished.
  const ours: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < READY_RUNS; i++) {
    const started = performance.now();
    const sb = await engine.sandboxes.create(SandboxSpecSchema.parse({ name: `bench-ready-${i}` }));
    await runExec(engine.connection, sb.id, { cmd: ['true'] });
    ours.push(performance.now() - started);
    await engine.sandboxes.destroy(sb.id);
    base.push(timeCli(['run', '--rm', ...podmanArgs(runtime), '--network', 'none', image, 'true']));
    process.stdout.write('.');
  }
  const ready = { ours: summarize(ours), base: summarize(base) };
  console.log(`\nready: ours p50 ${fmt(ready.ours.p50)} ms, podman run p50 ${fmt(ready.base.p50)} ms`);

  // 2. Exec round trip of `true`.
  const sb = await engine.sandboxes.create(SandboxSpecSchema.parse({ name: 'bench-exec' }));
  const execOurs: number[] = [];
  const execBase: number[] = [];
  for (let i = 0; i < EXEC_RUNS; i++) {
    const started = performance.now();
    await runExec(engine.connection, sb.id, { cmd: ['true'] });
    execOurs.push(performance.now() - started);
    execBase.push(timeCli(['exec', sb.name, 'true']));
  }
  const exec = { ours: summarize(execOurs), base: summarize(execBase) };
  console.log(`exec: ours p50 ${fmt(exec.ours.p50)} ms, podman exec p50 ${fmt(exec.base.p50)} ms`);

  // 3. Exec stdout throughput.
  const cmd = ['head', '-c', `${THROUGHPUT_MB}M`, '/dev/zero'];
  let bytes = 0;
  const started = performance.now();
  await runExec(engine.connection, sb.id, { cmd }, { onStdout: (c) => (bytes += c.length) });
  const oursMs = performance.now() - started;
  if (bytes !== THROUGHPUT_MB * 1024 * 1024) throw new Error(`throughput run lost bytes: ${bytes}`);
  const baseMs = await timeCliToDevNull(['exec', sb.name, ...cmd]);
  const mbps = { ours: THROUGHPUT_MB / (oursMs / 1000), base: THROUGHPUT_MB / (baseMs / 1000) };
  console.log(`throughput: ours ${fmt(mbps.ours)} MB/s, podman exec ${fmt(mbps.base)} MB/s`);
  await engine.sandboxes.destroy(sb.id);
  engine.close();

  writeResultsSection(
    'engine',
    `## Engine (issue 2): Warden's engine vs the podman CLI

${machineLine()} Podman ${engine.info().version}, runtime ${runtime}, cgroups ${engine.info().cgroupVersion}. Times in ms, p50 / p95. Ratio = ours ÷ podman (lower is better).

| measure | Warden engine | podman CLI | ratio p50 / p95 | target |
|---|---|---|---|---|
${row(`sandbox ready (create + start + first \`true\`) vs \`podman run --rm IMAGE true\`, n=${READY_RUNS}`, ready.ours, ready.base, '≤ 1.0')}
${row(`exec round trip of \`true\` vs \`podman exec NAME true\`, n=${EXEC_RUNS}`, exec.ours, exec.base, '≤ 0.75')}

| exec stdout throughput (\`head -c ${THROUGHPUT_MB}M /dev/zero\`) | Warden engine | \`podman exec … > /dev/null\` | ratio |
|---|---|---|---|
| MB/s | ${fmt(mbps.ours)} | ${fmt(mbps.base)} | ${(mbps.ours / mbps.base).toFixed(2)} |

The podman CLI runs with the same runtime and ulimits Warden passes (without them it cannot start a container on this host).`,
  );
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(home, { recursive: true, force: true }));
