// Egress (issue 14): a download through an `egress` sandbox's relay and Warden's proxy against the
// same download from a `nat` sandbox, interleaved in one run, from a server on this host; and the
// set-up of a small request (connect to first byte) both ways. Targets: throughput ratio ≥ 0.8,
// set-up overhead p50 ≤ 5 ms over the direct connection. The server runs in a process of its own, as
// a real destination does: in the bench's process it would share the proxy's event loop, a cost the
// `nat` download never pays.
//   npm run bench egress            (BENCH_EGRESS_MB, BENCH_EGRESS_RUNS, BENCH_EGRESS_SMALL to change sizes;
//                                    BENCH_EGRESS_RUNTIME=runsc for gVisor, whose section is written apart)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { EgressPolicySchema } from '../shared/types/policy.js';
import { SandboxSpecSchema } from '../shared/types/sandbox.js';
import { openWarden } from '../electron/engine/open-warden.js';
import { PodmanEngine } from '../electron/engine/podman/podman-engine.js';
import { collectExec } from '../electron/engine/podman/exec-session.js';
import { machineLine, summarize, writeResultsSection } from './results-file.js';
import { proxyCeiling } from './proxy-ceiling.js';

const MB = Number(process.env.BENCH_EGRESS_MB ?? 100);
// Nine pairs: one 100 MB download takes about a tenth of a second here, and the p50 of five moved by
// a tenth between runs on this shared machine.
const RUNS = Number(process.env.BENCH_EGRESS_RUNS ?? 9);
const SMALL = Number(process.env.BENCH_EGRESS_SMALL ?? 60);
const RUNTIME = process.env.BENCH_EGRESS_RUNTIME as 'runc' | 'runsc' | undefined;

const ORIGIN = `
const chunk = Buffer.alloc(1024 * 1024, 7);
const server = require('node:http').createServer((req, res) => {
  if (req.url !== '/blob') return void res.end('ok\\n');
  res.writeHead(200, { 'content-length': ${MB} * chunk.length });
  let left = ${MB};
  const pump = () => {
    while (left > 0) {
      left--;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
});
server.listen(0, '0.0.0.0', () => console.log(server.address().port));`;
const origin = spawn(process.execPath, ['-e', ORIGIN], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve) => origin.stdout.once('data', (d: Buffer) => resolve(Number(d.toString()))));

const home = mkdtempSync(join(tmpdir(), 'warden-bench-egress-'));
const podman = await PodmanEngine.open({ home });
const warden = await openWarden(home, { podman, gateway: false, actor: 'bench' });
warden.engine.egress.policy = () =>
  EgressPolicySchema.parse({
    rules: [{ host: 'origin.test', cidr: '127.0.0.1/32', action: 'allow' }],
    resolve: { 'origin.test': '127.0.0.1' },
  });
const made: string[] = [];
const create = async (network: 'egress' | 'nat') => {
  const info = await podman.sandboxes.create(
    SandboxSpecSchema.parse({ name: `bench-egress-${network}-${process.pid}`, network, ...(RUNTIME ? { runtime: RUNTIME } : {}) }),
  );
  made.push(info.id);
  return info.id;
};

async function curlTimes(id: string, url: string, fields: string): Promise<number[]> {
  const r = await collectExec(podman.connection, id, { cmd: ['curl', '-sS', '-o', '/dev/null', '-w', fields, url] });
  if (r.exitCode !== 0) throw new Error(`curl ${url} failed: ${r.stderr.toString()}`);
  return r.stdout.toString().trim().split(/\s+/).map(Number);
}

const loadStart = loadavg()[0]!;
try {
  const egress = await create('egress');
  const nat = await create('nat');
  const direct = `http://host.containers.internal:${port}`;
  const proxied = `http://origin.test:${port}`;
  const mbps = { egress: [] as number[], nat: [] as number[] };
  const setup = { egress: [] as number[], nat: [] as number[] };
  await curlTimes(nat, `${direct}/small`, '%{time_total}'); // warm both paths once
  await curlTimes(egress, `${proxied}/small`, '%{time_total}');
  for (let i = 0; i < RUNS; i++) {
    for (const [which, id, base] of [
      ['egress', egress, proxied],
      ['nat', nat, direct],
    ] as const) {
      const [speed] = await curlTimes(id, `${base}/blob`, '%{speed_download}');
      mbps[which].push(speed! / 1024 ** 2);
    }
  }
  for (let i = 0; i < SMALL; i++) {
    // time_starttransfer: from the start until the first byte of the answer (connect, proxy, request).
    setup.egress.push((await curlTimes(egress, `${proxied}/small`, '%{time_starttransfer}'))[0]! * 1000);
    setup.nat.push((await curlTimes(nat, `${direct}/small`, '%{time_starttransfer}'))[0]! * 1000);
  }
  const ceiling = await proxyCeiling(port, RUNS);
  const c = { direct: summarize(ceiling.direct), pumped: summarize(ceiling.pumped) };
  const t = { egress: summarize(mbps.egress), nat: summarize(mbps.nat) };
  const s = { egress: summarize(setup.egress), nat: summarize(setup.nat) };
  const ratio = t.egress.p50 / t.nat.p50;
  // Each egress download beside the nat download right after it: on a shared machine the load moves
  // between runs, and a pair sees the same load.
  const paired = summarize(mbps.egress.map((e, i) => e / mbps.nat[i]!));
  const overhead = s.egress.p50 - s.nat.p50;
  const f = (n: number) => n.toFixed(2);
  const load = `load average ${loadStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end (${availableParallelism()} cores)`;
  const md = [
    `## Egress (issue 14)${RUNTIME === 'runsc' ? ', under gVisor' : ''}`,
    '',
    machineLine(),
    `A ${MB} MB download with curl from a server on this host, ${RUNS} runs each, interleaved: from an \`egress\` sandbox (past its first MiB, under runc, the relay hands the program's connection itself to the egress pump, which splices it to the origin; under gVisor the relay carries the bytes over the sandbox's Unix socket to the pump; \`WARDEN_EGRESS_HAND_OVER=off\` makes runc carry them that way too: ${process.env.WARDEN_EGRESS_HAND_OVER === 'off' ? 'set' : 'not set'}; name pinned by \`resolve\`; the relay's side of the program's loopback hop unpaced, Reno whatever the host's default: \`resources/runner/runner.h\`) and from a \`nat\` sandbox (directly to host.containers.internal). Set-up: a small request, curl's time to first byte, ${SMALL} runs each. Runtime: ${RUNTIME ?? podman.info().defaultRuntime}. The origin server runs in its own process; ${load}.`,
    '',
    '| figure | egress p50 | egress p95 | nat p50 (baseline) | result | target |',
    '|---|---|---|---|---|---|',
    `| download MB/s | ${f(t.egress.p50)} | ${f(t.egress.p95)} | ${f(t.nat.p50)} | ratio ${ratio.toFixed(3)} (of the p50s); per pair p50 ${paired.p50.toFixed(3)}, lowest ${Math.min(...mbps.egress.map((e, i) => e / mbps.nat[i]!)).toFixed(3)} | ≥ 0.8 |`,
    `| set-up ms (first byte) | ${f(s.egress.p50)} | ${f(s.egress.p95)} | ${f(s.nat.p50)} | ${overhead >= 0 ? '+' : '−'}${f(Math.abs(overhead))} ms | ≤ 5 ms |`,
    '',
    `What carrying the bytes in a host process costs here, with no sandbox: the same download on the host over one loopback connection, ${f(c.direct.p50)} MB/s p50, and through the egress pump joining two, ${f(c.pumped.p50)} MB/s (ratio ${(c.pumped.p50 / c.direct.p50).toFixed(3)}; ${RUNS} each, interleaved). In the sandboxes: the egress path ${f(t.egress.p50)} MB/s, \`nat\`'s one connection over a veth pair ${f(t.nat.p50)} MB/s.`,
    ...(ratio < 0.8 || paired.p50 < 0.8
      ? [
          '',
          `Under the target in this run. Where the bytes go: under runc the program's own socket is spliced to the origin's by the pump on the host (one extra TCP connection and one more busy process against nat's veth pair); under gVisor (${(RUNTIME ?? podman.info().defaultRuntime) === 'runsc' ? 'this run' : 'not this run'}) the relay in the sandbox also carries every byte over the Unix socket (and gVisor's netstack every byte of both). Earlier carriers: frames over an engine exec (ratio 0.16, 2026-11-26); the relay carrying bytes under runc (0.50 idle, 2026-11-27; 0.55-0.89 under load later that day, interleaved with the hand-over); the hand-over with the loopback hop paced by BBR, this host's default (0.54-0.85, 2026-11-27 and 28).`,
        ]
      : []),
  ].join('\n');
  console.log(md);
  writeResultsSection(RUNTIME === 'runsc' ? 'egress-runsc' : 'egress', md);
} finally {
  for (const id of made) await podman.sandboxes.destroy(id).catch(() => undefined);
  warden.close();
  podman.close();
  origin.kill();
  rmSync(home, { recursive: true, force: true });
}
