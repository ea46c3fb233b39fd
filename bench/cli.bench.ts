// How fast the `warden` command itself starts, against the processes a user would compare it with,
// measured in the same run and interleaved: `warden --help` vs `node -e 0`, and `warden exec NAME --
// true` through a running `warden serve` vs `podman exec NAME true`. Whole processes, as a shell runs them.
//   npm run bench cli
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentClient } from '../electron/server/client.js';
import { machineLine, summarize, writeResultsSection } from './results-file.js';

const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'warden.mjs');
const home = mkdtempSync(join(tmpdir(), 'warden-bench-cli-'));
const env: NodeJS.ProcessEnv = { ...process.env, WARDEN_HOME: home };
delete env.CONTAINER_HOST;
delete env.WARDEN_LOCAL;
const NAME = 'bench-cli';
const fmt = (n: number) => n.toFixed(1);

/** Wall time of one whole process, start to exit; it must succeed. */
function timeProcess(command: string, args: string[]): number {
  const started = performance.now();
  const r = spawnSync(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status}): ${r.stderr.toString()}`);
  return ms;
}

const warden = (...args: string[]) => timeProcess(process.execPath, [bin, ...args]);

/** `warden serve` in the bench's own home; resolves with its URL (the first line it prints). */
function serve(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve({ child, url: out.split('\n')[0]! });
    });
    child.once('exit', (code) => reject(new Error(`warden serve exited (${code}) before it listened`)));
  });
}

type Summary = ReturnType<typeof summarize>;
const row = (what: string, ours: Summary, base: Summary, target: string) =>
  `| ${what} | ${fmt(ours.p50)} / ${fmt(ours.p95)} | ${fmt(base.p50)} / ${fmt(base.p95)} | ${(ours.p50 / base.p50).toFixed(2)} | ${target} |`;

async function main(): Promise<void> {
  // The bench measures the tree as it is: the bundle is rebuilt first.
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-cli.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('building the CLI failed');
  const server = await serve();
  try {
    warden('sandbox', 'create', '--name', NAME);
    // Warm every path once (page cache, the server's first run, Podman's exec path).
    warden('--help');
    timeProcess(process.execPath, ['-e', '0']);
    warden('exec', NAME, '--', 'true');
    timeProcess('podman', ['exec', NAME, 'true']);

    // The server's share of `warden exec`: the same HTTP call from a process that is already running.
    const token = readFileSync(join(home, 'user.token'), 'utf8').trim();
    const client = new AgentClient(server.url, token);
    await client.exec(NAME, { cmd: ['true'] });

    const help: number[] = [];
    const node: number[] = [];
    const exec: number[] = [];
    const podman: number[] = [];
    const http: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      help.push(warden('--help'));
      node.push(timeProcess(process.execPath, ['-e', '0']));
      exec.push(warden('exec', NAME, '--', 'true'));
      podman.push(timeProcess('podman', ['exec', NAME, 'true']));
      const started = performance.now();
      await client.exec(NAME, { cmd: ['true'] });
      http.push(performance.now() - started);
      process.stdout.write('.');
    }
    const f = {
      help: summarize(help),
      node: summarize(node),
      exec: summarize(exec),
      podman: summarize(podman),
      http: summarize(http),
    };
    const helpRatio = f.help.p50 / f.node.p50;
    const execRatio = f.exec.p50 / f.podman.p50;
    console.log(
      `\nwarden --help p50 ${fmt(f.help.p50)} ms vs node -e 0 ${fmt(f.node.p50)}: ${helpRatio.toFixed(2)}× (target ≤ 1.5)` +
        `\nwarden exec p50 ${fmt(f.exec.p50)} ms vs podman exec ${fmt(f.podman.p50)}: ${execRatio.toFixed(2)}× (target ≤ 1.0)` +
        `\n  of which: node start ${fmt(f.node.p50)}, the server's exec over HTTP ${fmt(f.http.p50)}, the rest (loading the CLI, server.json, token, connecting) ${fmt(f.exec.p50 - f.node.p50 - f.http.p50)}`,
    );
    writeResultsSection(
      'cli',
      `## CLI start (issue 13)

${machineLine()} Load average at the end: ${loadavg()
        .map((x) => x.toFixed(1))
        .join(
          ', ',
        )}. Whole processes, start to exit, n=${RUNS} each, interleaved; times in ms, p50 / p95; ratio = Warden ÷ baseline at p50. \`warden exec\` goes through a \`warden serve\` running in the bench's own WARDEN_HOME (runc).

| measure | Warden | baseline | ratio | target |
|---|---|---|---|---|
${row('`warden --help` vs `node -e 0`', f.help, f.node, '≤ 1.5')}
${row('`warden exec NAME -- true` vs `podman exec NAME true`', f.exec, f.podman, '≤ 1.0')}

Where \`warden exec\`'s ${fmt(f.exec.p50)} ms go (p50s): starting Node ${fmt(f.node.p50)}; the server's exec of \`true\` over HTTP, measured from an already running process (token, policy, run record, ledger entries, NDJSON) ${fmt(f.http.p50)}; the rest, ${fmt(f.exec.p50 - f.node.p50 - f.http.p50)}, is the CLI's own: loading its chunks (commander, zod for the request check, the HTTP client), finding server.json and its health check, reading the token. Node's start and the server's exec alone come to ${fmt(f.node.p50 + f.http.p50)} ms, ${((f.node.p50 + f.http.p50) / f.podman.p50).toFixed(2)}× \`podman exec\`: with the runner the server's share is small, and what is left above the baseline is the CLI's own start (loading its chunks, and building the zod schemas of the shared contracts it checks the request against and talks through, 30–40 ms of CPU of it; building them per route on first use is the next step).`,
    );
  } finally {
    spawnSync(process.execPath, [bin, 'sandbox', 'rm', NAME], { env, stdio: 'ignore' });
    if (server.child.exitCode === null) {
      const exited = new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      await exited;
    }
    rmSync(home, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
