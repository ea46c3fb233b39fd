// Exec and files through the sandbox's runner, against real Podman: every promise of the plain
// path kept (byte-exact streams, exit codes and signals, env/cwd/user, stdin, the cap, a timeout
// that kills detached descendants), calls in flight side by side without a slow one holding the
// others, the file API's refusals answered exactly as the python helper answers them, and a runner
// killed mid-call failing that call clearly, recorded as runner.lost, with the next call served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WardenError } from '../../../shared/errors.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { closeTestWarden, openTestEngine, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import { collectExec, runExec, runPlainExec } from '../podman/exec-session.js';
import { listDirIn, readFileIn, writeFileIn } from '../podman/file-helper.js';
import { runnersOf } from './runner-registry.js';
import { openTerminal } from '../podman/terminal-session.js';

let w: TestWarden;
let sb: SandboxInfo;
beforeAll(async () => {
  w = await openTestWarden();
  sb = await w.t.create();
});
afterAll(async () => {
  await closeTestWarden(w);
});

const conn = () => w.t.engine.connection;
const run = (cmd: string | string[], extra: Record<string, unknown> = {}, id = sb.id) => collectExec(conn(), id, { cmd, ...extra });

describe('exec through the runner', () => {
  it('is served by the runner, with stdout and stderr separate and byte-exact', async () => {
    expect((await run('printf %s "$WARDEN_EXEC_ID"')).stdout.toString()).toMatch(/^runner-/);
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const r = await run([
      'sh',
      '-c',
      `printf '${[...every].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('')}'; printf 'E\\000rr' >&2`,
    ]);
    expect(r.stdout).toEqual(every);
    expect(r.stderr).toEqual(Buffer.from('E\0rr', 'binary'));
  });

  it('reports exit codes, and a signal as 128 + its number', async () => {
    expect((await run('exit 3')).exitCode).toBe(3);
    const killed = await run('kill -TERM $$; sleep 5');
    expect(killed.exitCode).toBe(143);
    expect(killed.oomKilled).toBe(false);
    expect((await run(['/no/such/binary'])).exitCode).toBe(127);
  });

  it('honours env, cwd and stdin; a user it cannot become goes the plain way, as before', async () => {
    const r = await run('pwd; printf %s "$A"; cat', { cwd: '/tmp', env: { A: 'é=1' }, stdin: 'in' });
    expect(r.stdout.toString()).toBe('/tmp\né=1in');
    expect((await run('id -u', { user: 'root' })).stdout.toString()).toBe('0\n');
    const nobody = await run('id -u; printf %s "$WARDEN_EXEC_ID"', { user: 'nobody' });
    expect(nobody.stdout.toString()).toMatch(/^65534\n[0-9a-f]{16}$/);
    expect((await run('pwd', { cwd: '/no/such/dir' })).exitCode).not.toBe(0);
  });

  it('caps output and says it truncated', async () => {
    const r = await run('head -c 300000 /dev/zero; echo e >&2', { outputLimitBytes: 1000 });
    expect([r.stdout.length, r.stdoutBytes, r.stderr.toString(), r.truncated]).toEqual([1000, 300000, 'e\n', true]);
  });

  it('kills setsid, nohup and double-forked descendants on timeout, even those that dropped the marker', async () => {
    const script = [
      `setsid sh -c 'echo $$ > /tmp/p1; exec sleep 3001' &`,
      `nohup sh -c 'echo $$ > /tmp/p2; exec sleep 3002' >/dev/null 2>&1 &`,
      `(env -u WARDEN_EXEC_ID setsid sh -c '(echo $$ > /tmp/p3; exec sleep 3003) &' &)`,
      `while [ ! -s /tmp/p1 ] || [ ! -s /tmp/p2 ] || [ ! -s /tmp/p3 ]; do sleep 0.01; done`,
      'echo ready; sleep 3000',
    ].join('\n');
    const r = await run(script, { timeoutMs: 3000 });
    expect(r.stdout.toString()).toBe('ready\n');
    expect([r.timedOut, r.exitCode]).toEqual([true, 124]);
    const alive = await run('for f in /tmp/p1 /tmp/p2 /tmp/p3; do kill -0 "$(cat $f)" 2>/dev/null && echo "$f"; done; true');
    expect(alive.stdout.toString()).toBe('');
    expect((await run('ps -eo args')).stdout.toString()).not.toMatch(/sleep 300/);
  });

  it('takes the whole tree down when the command kills its own supervisor (no escaping the call or its timeout)', async () => {
    // The shell kills its parent (the call's supervisor), leaving its session, a marked setsid child
    // and its own foreground sleep behind: none of them may outlive the call.
    const script = [
      `setsid sh -c 'echo $$ > /tmp/s1; exec sleep 4001' </dev/null >/dev/null 2>&1 &`,
      `while [ ! -s /tmp/s1 ]; do sleep 0.01; done`,
      `echo $$ > /tmp/s2; kill -9 "$(cut -d' ' -f4 /proc/$$/stat)"; exec sleep 4000`,
    ].join('\n');
    const r = await run(script, { timeoutMs: 60_000 });
    expect(r.timedOut).toBe(false);
    const alive = await run('for f in /tmp/s1 /tmp/s2; do kill -0 "$(cat $f)" 2>/dev/null && echo "$f"; done; true');
    expect(alive.stdout.toString()).toBe('');
    expect((await run('ps -eo args')).stdout.toString()).not.toMatch(/sleep 400/);
  });

  it('cannot be read, rewritten or spoken for through /proc by the commands it runs (not dumpable)', async () => {
    // The runner itself: comm "runner", started by the engine exec (parent pid 0 in the sandbox's view).
    const find = 'for p in /proc/[0-9]*; do set -- $(cat $p/stat 2>/dev/null); [ "$2" = "(runner)" ] && [ "$4" = 0 ] && echo $1; done';
    const pid = (await run(find)).stdout.toString().trim().split('\n')[0]!;
    expect(pid).toMatch(/^[0-9]+$/);
    for (const what of ['mem', 'environ', 'fd/0']) {
      const r = await run(['sh', '-c', `exec 3<>/proc/${pid}/${what} && echo opened`]);
      expect(r.stdout.toString(), `/proc/<runner>/${what}`).toBe('');
      expect(r.exitCode).not.toBe(0);
    }
  });

  it('carries 50 calls in flight at once, and a stalled consumer holds back only its own call', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let stalledBytes = 0;
    const stalled = runExec(
      conn(),
      sb.id,
      { cmd: ['head', '-c', '50000000', '/dev/zero'] },
      {
        onStdout: (c) => {
          stalledBytes += c.length;
          return false;
        },
        drain: () => released,
      },
    );
    const calls = await Promise.all(
      Array.from({ length: 50 }, (_, i) => run(['sh', '-c', 'printf %s "$0"; printf %s "$0" >&2', `call-${i}`])),
    );
    expect(calls.map((c) => c.stdout.toString() + c.stderr.toString())).toEqual(calls.map((_, i) => `call-${i}call-${i}`));
    // The stalled call got no more than its window while the 50 ran, and finishes once drained.
    expect(stalledBytes).toBeLessThanOrEqual(1 << 20);
    release();
    expect((await stalled).stdoutBytes).toBe(50_000_000);
  });
});

describe('files through the runner', () => {
  type Outcome = string | { ok: unknown };
  async function outcome(p: Promise<unknown>): Promise<Outcome> {
    try {
      return { ok: await p };
    } catch (err) {
      return err instanceof WardenError ? `${err.code}: ${err.message}` : String(err);
    }
  }

  it('refuses every path trick, with the python helper’s very codes and messages', async () => {
    const box = await w.t.create();
    const setup = await run(
      `mkdir -p /tmp/outside /workspace/real && echo secret > /tmp/outside/secret && echo hi > /workspace/real/file && echo solo > /workspace/solo
       ln -s /tmp/outside /workspace/link; ln -s link /workspace/chain; ln -s /nowhere /workspace/dangling
       ln -s /tmp/outside/secret /workspace/last; ln /workspace/real/file /workspace/hard; mkfifo /workspace/fifo; ln -s / /workspace/root
       head -c 2000 /dev/zero > /workspace/big`,
      {},
      box.id,
    );
    expect(setup.exitCode).toBe(0);
    const id = box.id;
    const tricks = async (): Promise<Outcome[]> => {
      const c = conn();
      const out: Outcome[] = [];
      for (const comps of [
        ['link', 'secret'],
        ['chain', 'secret'],
        ['dangling'],
        ['last'],
        ['hard'],
        ['fifo'],
        ['root', 'etc', 'passwd'],
        ['real'],
        ['real', 'missing'],
        ['missing', 'x'],
        ['solo', 'x'],
        ['big'],
        [],
      ]) {
        out.push(await outcome(readFileIn(c, id, comps, 1000).then((b) => b.toString())));
      }
      out.push(await outcome(readFileIn(c, id, ['solo'], 1000).then((b) => b.toString())));
      for (const comps of [['last'], ['link', 'new'], ['hard'], ['fifo'], ['real'], ['root', 'tmp', 'x'], ['dangling'], []]) {
        out.push(await outcome(writeFileIn(c, id, comps, Buffer.from('pwned'))));
      }
      out.push(await outcome(writeFileIn(c, id, ['made', 'deep', 'f.txt'], Buffer.from('fine'))));
      for (const comps of [['link'], ['root'], ['solo'], ['missing'], ['real']]) {
        out.push(await outcome(listDirIn(c, id, comps).then((es) => es.map((e) => [e.name, e.type, e.size, e.mode]))));
      }
      return out;
    };
    const throughRunner = await tricks();
    expect((await run('printf %s "$WARDEN_EXEC_ID"', {}, id)).stdout.toString()).toMatch(/^runner-/);
    expect(throughRunner.filter((o) => typeof o === 'string').length).toBeGreaterThanOrEqual(20);
    expect((await run('cat /tmp/outside/secret; ls /tmp/outside', {}, id)).stdout.toString()).toBe('secret\nsecret\n');
    await runnersOf(conn()).usePlain(id);
    expect((await run('printf %s "$WARDEN_EXEC_ID"', {}, id)).stdout.toString()).toMatch(/^[0-9a-f]{16}$/);
    expect(await tricks()).toEqual(throughRunner);
  });
});

describe('a runner that dies', () => {
  it('fails the call in flight clearly, is recorded as runner.lost, and the next call is served', async () => {
    const box = await w.t.create();
    const channel = await runnersOf(conn()).channelFor(box.id);
    expect(channel?.pid).toBeGreaterThan(0);
    let killed: Promise<unknown> | null = null;
    const call = w.engine.execStream(
      box.id,
      { cmd: 'echo started; sleep 1000' },
      {
        onStdout: () => {
          // From inside the sandbox, as agent code would: kill -9 the runner mid-call.
          killed ??= runPlainExec(conn(), box.id, { cmd: ['kill', '-9', String(channel!.pid)] });
        },
      },
    );
    await expect(call).rejects.toMatchObject({ code: 'E_ENGINE', message: expect.stringContaining('runner was lost') });
    await killed;
    const deadline = Date.now() + 10_000;
    while (w.ledger.entries({ sandboxId: box.id, kind: 'runner.lost' }).length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const [lost] = w.ledger.entries({ sandboxId: box.id, kind: 'runner.lost' });
    expect(lost?.payload).toMatchObject({ inFlight: 1, restarting: true, reason: expect.stringContaining('closed') });
    const next = await w.engine.execStream(box.id, { cmd: 'printf %s "$WARDEN_EXEC_ID"' }, {});
    expect(next.exitCode).toBe(0);
    const again = await run('printf %s "$WARDEN_EXEC_ID"', {}, box.id);
    expect(again.stdout.toString()).toMatch(/^runner-/);
  });
});

describe('a terminal through the runner', () => {
  it('runs a shell on a pseudo-terminal in the sandbox, with input, resize and its exit code', async () => {
    const term = await openTerminal(conn(), sb.id, { cmd: ['/bin/sh'], size: { cols: 80, rows: 24 } });
    expect(term.execId).toMatch(/^runner:/);
    let seen = '';
    const waiters: Array<() => void> = [];
    term.onData((c) => {
      seen += c.toString('utf8');
      for (const w of waiters.splice(0)) w();
    });
    const waitFor = async (text: string): Promise<void> => {
      while (!seen.includes(text)) await new Promise<void>((resolve) => waiters.push(resolve));
    };
    term.write('tty; printf "%s\\n" "$WARDEN_EXEC_ID"; echo "sum=$((40+2))"\n');
    await waitFor('sum=42');
    expect(seen).toMatch(/\/dev\/pts\/\d+/);
    expect(seen).toMatch(/runner-\d+-\d+/);
    await term.resize({ cols: 123, rows: 45 });
    term.write('stty size\n');
    await waitFor('45 123');
    term.write('exit 3\n');
    expect(await term.exited).toBe(3);
  });
});

describe('a runner that stops answering', () => {
  it('is declared lost while a call without a timeout waits on it, so the call fails instead of hanging', async () => {
    const box = await w.t.create();
    const channel = await runnersOf(conn()).channelFor(box.id);
    const call = run('sleep 1000', {}, box.id);
    // Frozen from inside the sandbox, as agent code could: it neither dies nor answers.
    expect((await runPlainExec(conn(), box.id, { cmd: ['kill', '-STOP', String(channel!.pid)] })).exitCode).toBe(0);
    await expect(call).rejects.toMatchObject({ code: 'E_ENGINE', message: expect.stringContaining('stopped answering') });
    expect((await run('printf %s "$WARDEN_EXEC_ID"', {}, box.id)).stdout.toString()).toMatch(/^runner-/);
  }, 60_000);
});

describe('a sandbox made without the runner', () => {
  it('is served by plain engine execs, and never gets a runner started', async () => {
    // A Warden that has no runner built makes sandboxes without the mount, as Wardens before it did.
    process.env.WARDEN_RUNNER = 'off';
    const old = await openTestEngine().finally(() => delete process.env.WARDEN_RUNNER);
    try {
      const made = await old.create();
      expect((await run('test -e /.warden/runner', {}, made.id)).exitCode).toBe(1);
      for (let i = 0; i < 3; i++) {
        const r = await run('printf %s "$WARDEN_EXEC_ID"', {}, made.id);
        expect(r.stdout.toString()).toMatch(/^[0-9a-f]{16}$/);
      }
      expect(await runnersOf(conn()).channelFor(made.id)).toBeNull();
      expect((await listDirIn(conn(), made.id, [])).map((e) => e.name)).toEqual([]);
    } finally {
      await old.cleanup();
    }
  });
});
