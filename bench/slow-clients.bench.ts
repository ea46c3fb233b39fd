// serve's memory under agents that never read their exec streams (issue 12).  npm run bench slow-clients
// 20 clients each start `head -c 256M /dev/zero` (NULs: six bytes each once JSON-escaped) through the
// HTTP API and stop reading (a paused socket). serve's RSS and heap are sampled while they sit there;
// then the clients hang up and every exec must end, recorded as cancelled: clientGone.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { PodmanEngine } from '../electron/engine/podman/podman-engine.js';
import { openAuditLedger } from '../electron/engine/open-warden.js';
import { startServer } from '../electron/server/index.js';
import { AgentClient } from '../electron/server/client.js';
import { parsePolicy, defaultPolicyPath } from '../electron/engine/gateway/policy-load.js';
import { STREAM_MAX_QUEUED } from '../electron/server/stream-meter.js';
import { machineLine, writeResultsSection } from './results-file.js';

const CLIENTS = Number(process.env.BENCH_SLOW_CLIENTS ?? 20);
const SANDBOXES = 4;
const MiB = 1024 * 1024;

const home = mkdtempSync(join(tmpdir(), 'warden-bench-slow-'));
const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
policy.create.maxSandboxes = SANDBOXES;
const podman = await PodmanEngine.open({ home });
const ledger = openAuditLedger(home);
const server = await startServer({ home, policy, podman, ledger, watch: false, announce: false });
const mem = () => {
  const m = process.memoryUsage();
  return { rss: m.rss / MiB, heap: m.heapUsed / MiB, external: (m.external + m.arrayBuffers) / MiB };
};
const sockets: Socket[] = [];
try {
  const token = server.tokens.create('slow').token;
  const agent = new AgentClient(server.url, token);
  const boxes = await Promise.all(
    Array.from({ length: SANDBOXES }, (_, i) => agent.request('sandbox.create', { body: { name: `bench-slow-${process.pid}-${i}` } })),
  );
  (globalThis as { gc?: () => void }).gc?.();
  const before = mem();
  const finished = new Promise<Array<{ cancelled?: string; stdoutBytes: number }>>((resolve) => {
    const seen: Array<{ cancelled?: string; stdoutBytes: number }> = [];
    ledger.subscribe((e) => {
      if (e.kind === 'exec.finished' && (seen.push(e.payload as { cancelled?: string; stdoutBytes: number }), seen.length === CLIENTS))
        resolve(seen);
    });
  });
  for (let i = 0; i < CLIENTS; i++) {
    const body = JSON.stringify({ cmd: 'head -c 256M /dev/zero' });
    const socket = connect(server.port, '127.0.0.1');
    socket.write(
      `POST /v1/sandboxes/${boxes[i % SANDBOXES]!.id}/exec HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${token}\r\nX-Warden-Run: slow-${i}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    socket.once('data', () => socket.pause()); // reads the first bytes, then never again
    sockets.push(socket);
  }
  while (server.streams.paused < CLIENTS) await new Promise((r) => setTimeout(r, 50));
  const samples: ReturnType<typeof mem>[] = [];
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 250));
    samples.push(mem());
  }
  const during = {
    rss: Math.max(...samples.map((s) => s.rss)),
    heap: Math.max(...samples.map((s) => s.heap)),
    external: Math.max(...samples.map((s) => s.external)),
  };
  for (const s of sockets) s.destroy();
  const ended = await finished;
  const after = mem();
  const gone = ended.filter((e) => e.cancelled === 'clientGone').length;
  const produced = ended.reduce((n, e) => n + e.stdoutBytes, 0) / CLIENTS / MiB;
  await Promise.all(boxes.map((b) => agent.request('sandbox.destroy', { params: { id: b.id } })));
  const f = (n: number) => n.toFixed(1);
  const md = `## Slow clients (issue 12): serve's memory under agents that never read

${machineLine()}

${CLIENTS} clients over ${SANDBOXES} sandboxes each POST an exec of \`head -c 256M /dev/zero\` (256 MiB of NULs, 1.5 GiB as JSON) and stop reading after the first bytes; serve (in this process) is sampled 20 times over 5 s once every stream has been paused, then the clients hang up.

| serve | before | while ${CLIENTS} clients do not read (max) | after they hang up |
|---|---|---|---|
| RSS MiB | ${f(before.rss)} | ${f(during.rss)} | ${f(after.rss)} |
| JS heap MiB | ${f(before.heap)} | ${f(during.heap)} | ${f(after.heap)} |
| buffers MiB | ${f(before.external)} | ${f(during.external)} | ${f(after.external)} |

Most bytes any one response held: ${f(server.streams.peakQueuedBytes / 1024)} KiB (bound ${STREAM_MAX_QUEUED / MiB} MiB). Output each command wrote before it was ended: ${f(produced)} MiB on average (of 256; it blocks once its stream is paused, then the rest until the kill is read and dropped). Execs ended when their client hung up: ${gone} of ${CLIENTS}, each recorded as \`exec.finished\` with \`"cancelled":"clientGone"\`. Before this bound, one 100 MiB exec to a client that never read took serve from 94 to 739 MiB RSS and three 256 MiB ones ended in "Reached heap limit".
`;
  console.log(md);
  writeResultsSection('slow-clients', md);
  if (gone !== CLIENTS || server.streams.peakQueuedBytes > STREAM_MAX_QUEUED) process.exitCode = 1;
} finally {
  for (const s of sockets) s.destroy();
  await server.close();
  podman.close();
  ledger.close();
  rmSync(home, { recursive: true, force: true });
}
