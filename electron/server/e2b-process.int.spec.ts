// The real `e2b` SDK's process calls beyond commands.run, against `warden serve` and real Podman:
// stdin streamed to a running command (sendStdin, closeStdin) through the runner's STDIN frames and
// their credit; commands.connect from several clients at once, from the point of connecting, a
// client that never reads cut off without stalling the command or the others, another agent's pid
// not found; sandbox.pty (create under the command policy, sendInput, resize, kill), each PTY one
// exec call whose transcript is digested in the ledger.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { CommandExitError, Sandbox, type CommandHandle } from 'e2b';
import { E2B_PREFIX } from '../../shared/contracts/e2b-routes.js';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';
import { failure, pointE2bAt } from '../test-support/e2b-sdk.js';

let ts: TestServer;
let sbx: Sandbox;
const AGENT = 'e2b-proc-agent';
let restoreEnv = () => {};

/** Resolves when `text` has been seen in what `collect` gathers. */
function seen(): { push: (d: string) => void; until: (text: string) => Promise<void>; text: () => string } {
  let all = '';
  const waits: Array<{ text: string; resolve: () => void }> = [];
  return {
    push: (d) => {
      all += d;
      for (const w of waits.filter((w) => all.includes(w.text))) {
        waits.splice(waits.indexOf(w), 1);
        w.resolve();
      }
    },
    until: (text) => (all.includes(text) ? Promise.resolve() : new Promise((resolve) => waits.push({ text, resolve }))),
    text: () => all,
  };
}

beforeAll(async () => {
  ts = await openTestServer(
    policyWith((p) => {
      // A PTY runs an interactive bash: a program known only at run time, asked here.
      p.commands.dynamic = 'ask';
    }),
  );
  restoreEnv = pointE2bAt(ts, AGENT);
  sbx = await Sandbox.create({ metadata: { [TEST_LABEL_KEY]: ts.t.runId }, timeoutMs: 600_000 });
  await ts.server.engine.attestations.idle();
});

afterAll(async () => {
  await sbx?.kill().catch(() => undefined);
  restoreEnv();
  await ts?.close();
});

/** Approves (or denies) the next ask. */
function decideNext(decision: 'approve-once' | 'deny'): void {
  const off = ts.server.engine.events.on('approval.requested', (a) => {
    off();
    void ts.server.gateway['approval.decide']({ id: a.id, decision, by: 'user' });
  });
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

describe('the e2b SDK: stdin, connect and PTY against Warden', () => {
  it('streams stdin to a running command and closes it; the ledger holds its size and digest', async () => {
    const out = seen();
    const handle = await sbx.commands.run('while read l; do echo "got $l"; done; echo bye', {
      stdin: true,
      background: true,
      onStdout: out.push,
    });
    await sbx.commands.sendStdin(handle.pid, 'one\n');
    await out.until('got one');
    await handle.sendStdin('two\n');
    await sbx.commands.closeStdin(handle.pid);
    const result = await handle.wait();
    expect(result.stdout).toBe('got one\ngot two\nbye\n');
    const finished = ts.audit.entries.filter((e) => e.kind === 'exec.finished' && e.sandboxId === sbx.sandboxId).at(-1)!;
    expect(finished.payload).toMatchObject({ stdinBytes: 8, stdinDigest: sha256('one\ntwo\n') });
    const run = ts.server.gateway.runs.list({ agent: AGENT }).find((r) => r.sandboxId === sbx.sandboxId)!;
    const call = ts.server.gateway.runs
      .detail(run.id)
      .toolCalls.filter((c) => c.tool === 'exec')
      .at(-1)!;
    expect(call.args).toMatchObject({ stdin: 'streamed' });
    // A command that closes its stdin and goes on: what is sent after is refused, not silently dropped.
    const closer = seen();
    const closing = await sbx.commands.run('exec 0<&-; echo closed; sleep 300', { stdin: true, background: true, onStdout: closer.push });
    await closer.until('closed');
    await sbx.commands.sendStdin(closing.pid, 'x');
    // The runner tried to write it before it starts this next command: its answer is in by then.
    await sbx.commands.run('true');
    expect((await failure(sbx.commands.sendStdin(closing.pid, 'y'))).message).toContain('closed its stdin');
    await closing.kill();
    // A command started without stdin has none to write to.
    const plain = await sbx.commands.run('sleep 300', { background: true });
    expect((await failure(sbx.commands.sendStdin(plain.pid, 'x'))).message).toContain('started without stdin');
    await plain.kill();
  });

  it('holds back a writer whose command never reads, without stalling anything else; its end fails the write', async () => {
    const handle = await sbx.commands.run('sleep 300', { stdin: true, background: true });
    let settled = false;
    // 512 KiB, past what the runner's window (256 KiB) and the pipe (64 KiB) hold: it cannot all go in.
    const write = sbx.commands.sendStdin(handle.pid, new Uint8Array(512 << 10).fill(120), { requestTimeoutMs: 0 });
    void write.then(
      () => (settled = true),
      () => (settled = true),
    );
    // The same runner keeps serving other calls meanwhile, and the write is still held.
    expect((await sbx.commands.run('echo other')).stdout).toBe('other\n');
    expect(await sbx.files.write('still.txt', 'ok')).toBeTruthy();
    expect(settled).toBe(false);
    // Writes piling up behind it are bounded: past 4 waiting, the next is refused at once.
    const more = [1, 2, 3, 4].map(() =>
      sbx.commands.sendStdin(handle.pid, 'y', { requestTimeoutMs: 0 }).then(
        () => 'written',
        (e: Error) => e.message,
      ),
    );
    // One of them is refused at once; the others wait with the first until the command ends.
    expect(await Promise.race(more)).toContain('already waiting');
    await handle.kill();
    // Killed, it closes its stdin and ends: the write held for it fails (whichever the runner says first).
    expect((await failure(write)).message).toMatch(/ended|closed its stdin/);
    const outcomes = await Promise.all(more);
    expect(outcomes.filter((o) => o.includes('already waiting'))).toHaveLength(1);
    expect(outcomes.filter((o) => /ended|closed its stdin/.test(o))).toHaveLength(3);
    expect(await failure(handle.wait())).toBeInstanceOf(CommandExitError);
  });

  it('lets several clients follow a running command from the point they connect, to its end', async () => {
    const starter = seen();
    const handle = await sbx.commands.run('while read l; do echo "got $l"; done; exit 3', {
      stdin: true,
      background: true,
      onStdout: starter.push,
    });
    await handle.sendStdin('before\n');
    await starter.until('got before');
    const a = seen();
    const b = seen();
    const first = await sbx.commands.connect(handle.pid, { onStdout: a.push });
    const second = await sbx.commands.connect(handle.pid, { onStdout: b.push });
    expect(first.pid).toBe(handle.pid);
    await handle.sendStdin('after\n');
    await Promise.all([a.until('got after'), b.until('got after'), starter.until('got after')]);
    // A client that disconnects leaves the others (and the command) as they were.
    await second.disconnect();
    await first.sendStdin('last\n');
    await a.until('got last');
    await first.closeStdin();
    const ends = await Promise.all([handle, first].map((h: CommandHandle) => failure(h.wait())));
    for (const end of ends) expect((end as CommandExitError).exitCode).toBe(3);
    expect(a.text()).toBe('got after\ngot last\n');
    expect(b.text()).toBe('got after\n');
    expect(starter.text()).toBe('got before\ngot after\ngot last\n');
    expect(await failure(sbx.commands.connect(handle.pid))).toMatchObject({ name: expect.stringMatching(/NotFound/) });
  });

  it('keeps a command whose starter disconnected running for a client still following it, to its end', async () => {
    const handle = await sbx.commands.run('while read l; do echo "got $l"; done; echo end', { stdin: true, background: true });
    const follower = seen();
    const following = await sbx.commands.connect(handle.pid, { onStdout: follower.push });
    // The server sees the starter's stream go before the next step.
    const starterGone = new Promise((resolve) => ts.server.streams.once('clientGone', resolve));
    await handle.disconnect();
    await starterGone;
    await following.sendStdin('still here\n');
    await follower.until('got still here');
    await following.closeStdin();
    expect((await following.wait()).exitCode).toBe(0);
    expect(follower.text()).toBe('got still here\nend\n');
  });

  it("answers another agent's pid with not found, in its own sandbox", async () => {
    const handle = await sbx.commands.run('sleep 300', { background: true });
    const other = await Sandbox.create({
      apiKey: ts.server.tokens.create('e2b-proc-other').token,
      metadata: { [TEST_LABEL_KEY]: ts.t.runId },
    });
    try {
      const err = await failure(other.commands.connect(handle.pid));
      expect(err.message).toMatch(/no running command/);
      expect(await other.commands.kill(handle.pid)).toBe(false);
      expect((await sbx.commands.list()).map((p) => p.pid)).toContain(handle.pid);
    } finally {
      await other.kill();
      await handle.kill();
    }
  });

  it('cuts off a client that stops reading, while the command and the other clients get everything', async () => {
    const handle = await sbx.commands.run("read go; head -c 33554432 /dev/zero | tr '\\0' x; echo; echo done", {
      stdin: true,
      background: true,
    });
    const stalled = await rawConnect(handle.pid);
    const watcher = seen();
    const watching = await sbx.commands.connect(handle.pid, { onStdout: watcher.push });
    await handle.sendStdin('go\n');
    const result = await handle.wait();
    expect(result.stdout.length).toBe(33554432 + 6);
    expect(result.stdout.endsWith('x\ndone\n')).toBe(true);
    await watching.wait();
    expect(watcher.text().length).toBe(33554432 + 6);
    // The client that never read was cut off: its stream stops without the command's end.
    const rest = await stalled.readAll();
    expect(rest.includes('"end"')).toBe(false);
    expect(ts.server.streams.cutOff).toBeGreaterThan(0);
  });

  it('runs a PTY under the command policy: input, resize, its transcript digested; a denied one is refused', async () => {
    decideNext('deny');
    const denied = await failure(sbx.pty.create({ cols: 80, rows: 24, onData: () => undefined }));
    expect(denied.message).toContain('Warden policy');

    decideNext('approve-once');
    const screen = seen();
    const bytes: Buffer[] = [];
    const decoder = new TextDecoder();
    const pty = await sbx.pty.create({
      cols: 80,
      rows: 24,
      onData: (d) => {
        bytes.push(Buffer.from(d));
        screen.push(decoder.decode(d, { stream: true }));
      },
    });
    await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('echo $((6*7))x; stty size\n'));
    await screen.until('42x');
    await screen.until('24 80');
    await sbx.pty.resize(pty.pid, { cols: 100, rows: 30 });
    await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('stty size\n'));
    await screen.until('30 100');
    // A second client on the same terminal sees what comes from now on.
    const viewer = seen();
    const viewing = await sbx.pty.connect(pty.pid, { onData: (d) => viewer.push(new TextDecoder().decode(d)) });
    await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('echo joined$((1+1))\n'));
    await Promise.all([viewer.until('joined2'), screen.until('joined2')]);
    expect(viewer.text()).not.toContain('42x');
    // A PTY takes keys, not stdin; and it is one of the agent's commands.
    expect((await failure(sbx.commands.sendStdin(pty.pid, 'x'))).message).toContain('not stdin');
    expect((await sbx.commands.list()).map((p) => p.pid)).toContain(pty.pid);
    await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('exit 0\n'));
    expect((await pty.wait()).exitCode).toBe(0);
    expect((await viewing.wait()).exitCode).toBe(0);

    const run = ts.server.gateway.runs.list({ agent: AGENT }).find((r) => r.sandboxId === sbx.sandboxId)!;
    const call = ts.server.gateway.runs
      .detail(run.id)
      .toolCalls.filter((c) => c.tool === 'exec')
      .at(-1)!;
    expect(call.args).toMatchObject({ argv: ['/bin/bash', '-i', '-l'], stdin: 'streamed', pty: { cols: 80, rows: 24 } });
    const started = ts.audit.entries.filter((e) => e.kind === 'exec.started' && e.sandboxId === sbx.sandboxId).at(-1)!;
    expect(started.payload).toMatchObject({ argv: ['/bin/bash', '-i', '-l'], stdin: 'streamed', pty: { cols: 80, rows: 24 } });
    const finished = ts.audit.entries.filter((e) => e.kind === 'exec.finished' && e.sandboxId === sbx.sandboxId).at(-1)!;
    expect(finished.payload).toMatchObject({ exitCode: 0, stdoutDigest: sha256(Buffer.concat(bytes)) });

    decideNext('approve-once');
    const killed = await sbx.pty.create({ cols: 80, rows: 24, onData: () => undefined });
    expect(await sbx.pty.kill(killed.pid)).toBe(true);
    expect(await failure(killed.wait())).toBeInstanceOf(CommandExitError);
  });
});

/** A Connect client by hand that reads the start and then stops reading (its socket paused). */
async function rawConnect(pid: number): Promise<{ readAll: () => Promise<string> }> {
  const info = (await (
    await fetch(`${ts.server.url}${E2B_PREFIX}/sandboxes/${sbx.sandboxId}`, { headers: { 'X-API-KEY': process.env.E2B_API_KEY! } })
  ).json()) as { envdAccessToken: string };
  const json = Buffer.from(JSON.stringify({ process: { pid } }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  const body = Buffer.concat([head, json]);
  const url = new URL(ts.server.url);
  const socket: Socket = netConnect({ host: url.hostname, port: Number(url.port) });
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.write(
      [
        `POST ${E2B_PREFIX}/process.Process/Connect HTTP/1.1`,
        `Host: ${url.host}`,
        'Content-Type: application/connect+json',
        `X-Access-Token: ${info.envdAccessToken}`,
        `E2b-Sandbox-Id: ${sbx.sandboxId}`,
        `Content-Length: ${body.length}`,
        '',
        '',
      ].join('\r\n'),
    );
    socket.write(body);
    const onData = (c: Buffer) => {
      chunks.push(c);
      if (Buffer.concat(chunks).includes('"start"')) {
        socket.off('data', onData);
        socket.pause();
        resolve();
      }
    };
    socket.on('data', onData);
  });
  return {
    readAll: () =>
      new Promise<string>((resolve) => {
        const rest: Buffer[] = [];
        socket.on('data', (c: Buffer) => rest.push(c));
        socket.once('close', () => resolve(Buffer.concat(rest).toString('latin1')));
        socket.resume();
      }),
  };
}
