// gVisor (runsc) beside runc: sandbox ready and exec round trip through Warden's engine, each
// against the podman CLI with the same runtime (runsc through the same wrapper), in the same run.
//   npm run bench runtimes
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodmanEngine } from '../electron/engine/podman/podman-engine.js';
import { runExec } from '../electron/engine/podman/exec-session.js';
import { ociRuntimeArg, runscInstalled } from '../electron/engine/podman/oci-runtime.js';
import { sandboxRlimits } from '../electron/engine/podman/container-spec.js';
import { hostLimits } from '../electron/engine/podman/host-limits.js';
import { SandboxSpecSchema, type RuntimeName } from '../shared/types/sandbox.js';
import { machineLine, summarize, writeResultsSection } from './results-file.js';
import { timeCli, timeExecTrue } from './podman-cli.js';

const READY_RUNS = Number(process.env.BENCH_READY_RUNS ?? 15);
const EXEC_RUNS = Number(process.env.BENCH_EXEC_RUNS ?? 30);
const home = mkdtempSync(join(tmpdir(), 'warden-bench-'));
const fmt = (n: number) => n.toFixed(1);

type Summary = ReturnType<typeof summarize>;
interface Figures {
  ready: { ours: Summary; base: Summary };
  exec: { ours: Summary; base: Summary };
}

async function measure(engine: PodmanEngine, runtime: RuntimeName): Promise<Figures> {
  const image = engine.sandboxes.defaultImage;
  const ulimits = sandboxRlimits(hostLimits()).flatMap((l) => ['--ulimit', `${l.type}=${l.soft}:${l.hard}`]);
  const cliRun = ['run', '--rm', '--runtime', ociRuntimeArg(runtime), ...ulimits, '--network', 'none', image, 'true'];
  const spec = (name: string) => SandboxSpecSchema.parse({ name, runtime });
  // Warm both paths once (the runtime's own Podman service up, layers in page cache).
  const warm = await engine.sandboxes.create(spec(`bench-${runtime}-warm`));
  await runExec(engine.connection, warm.id, { cmd: ['true'] });
  await engine.sandboxes.destroy(warm.id);
  timeCli(cliRun);

  const ours: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < READY_RUNS; i++) {
    const started = performance.now();
    const sb = await engine.sandboxes.create(spec(`bench-${runtime}-${i}`));
    await runExec(engine.connection, sb.id, { cmd: ['true'] });
    ours.push(performance.now() - started);
    await engine.sandboxes.destroy(sb.id);
    base.push(timeCli(cliRun));
    process.stdout.write('.');
  }
  const sb = await engine.sandboxes.create(spec(`bench-${runtime}-exec`));
  const execTimes = await timeExecTrue(engine.connection, sb, EXEC_RUNS);
  await engine.sandboxes.destroy(sb.id);
  const figures = {
    ready: { ours: summarize(ours), base: summarize(base) },
    exec: { ours: summarize(execTimes.ours), base: summarize(execTimes.base) },
  };
  console.log(
    `\n${runtime}: ready p50 ${fmt(figures.ready.ours.p50)} ms (podman run ${fmt(figures.ready.base.p50)}), exec p50 ${fmt(figures.exec.ours.p50)} ms (podman exec ${fmt(figures.exec.base.p50)})`,
  );
  return figures;
}

const row = (what: string, ours: Summary, base: Summary, target: string) =>
  `| ${what} | ${fmt(ours.p50)} / ${fmt(ours.p95)} | ${fmt(base.p50)} / ${fmt(base.p95)} | ${(ours.p50 / base.p50).toFixed(2)} / ${(ours.p95 / base.p95).toFixed(2)} | ${target} |`;

async function main(): Promise<void> {
  if (!runscInstalled()) {
    throw new Error('runsc is not installed: run `npm run setup` (it installs it from bookworm-backports)');
  }
  const engine = await PodmanEngine.open({ home });
  try {
    const runc = await measure(engine, 'runc');
    const runsc = await measure(engine, 'runsc');
    writeResultsSection(
      'runtimes',
      `## Runtimes (issue 10): gVisor (runsc) beside runc

${machineLine()} Podman ${engine.info().version}, cgroups ${engine.info().cgroupVersion}; runsc through resources/runtimes/runsc-warden (systrap). Times in ms, p50 / p95; ratio = Warden ÷ podman CLI with the same runtime.

| measure | Warden | podman CLI | ratio p50 / p95 | target |
|---|---|---|---|---|
${row(`runc: sandbox ready (create + start + first \`true\`) vs \`podman run --rm\`, n=${READY_RUNS}`, runc.ready.ours, runc.ready.base, '≤ 1.0')}
${row(`runsc: sandbox ready vs \`podman run --rm --runtime <wrapper>\`, n=${READY_RUNS}`, runsc.ready.ours, runsc.ready.base, '≤ 1.0')}
${row(`runc: exec round trip of \`true\` vs \`podman exec\`, n=${EXEC_RUNS}`, runc.exec.ours, runc.exec.base, '≤ 0.75')}
${row(`runsc: exec round trip of \`true\` vs \`podman exec\`, n=${EXEC_RUNS}`, runsc.exec.ours, runsc.exec.base, '≤ 0.75')}

gVisor costs, Warden to Warden: ready ${(runsc.ready.ours.p50 / runc.ready.ours.p50).toFixed(2)}× runc at p50, exec ${(runsc.exec.ours.p50 / runc.exec.ours.p50).toFixed(2)}×.`,
    );
  } finally {
    engine.close();
    rmSync(home, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
