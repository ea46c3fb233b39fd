// The real `e2b` SDK from npm, unchanged, against `warden serve` and real Podman: only the three
// variables `warden e2b env` prints are set. One sandbox serves the whole session; each step must
// be a call in the agent's run and in the ledger, and refusals must reach the SDK as its own errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthenticationError, CommandExitError, Sandbox } from 'e2b';
import { E2B_PREFIX } from '../../shared/contracts/e2b-routes.js';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';
import { failure, saveE2bEnv } from '../test-support/e2b-sdk.js';
import { removeServerFile, writeServerFile } from './server-file.js';
import { TokenStore } from './tokens.js';

let ts: TestServer;
let sbx: Sandbox;
const AGENT = 'e2b-agent';
let restoreEnv = () => {};

/** The CLI from source, async: the server runs in this process and must keep answering while it waits. */
function warden(args: string[], home: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'electron/cli/index.ts', ...args], {
      env: { ...process.env, WARDEN_HOME: home },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

beforeAll(async () => {
  ts = await openTestServer(
    policyWith((p) => {
      p.commands.rules.push(
        { command: ['touch'], action: 'deny', reason: 'no touching in this spec' },
        { command: ['git'], action: 'ask' },
      );
    }),
  );
  // What `warden serve` writes for the CLI; then the SDK gets exactly what `warden e2b env` prints.
  writeServerFile(ts.t.home, { pid: process.pid, port: ts.server.port, url: ts.server.url, startedAt: new Date().toISOString() });
  const env = await warden(['e2b', 'env', '--agent', AGENT], ts.t.home);
  restoreEnv = saveE2bEnv();
  expect(env.status, env.stderr).toBe(0);
  for (const line of env.stdout.trim().split('\n')) {
    const m = /^export (E2B_[A-Z_]+)='([^']*)'$/.exec(line);
    expect(m, line).not.toBeNull();
    process.env[m![1]!] = m![2]!;
  }
  expect(process.env.E2B_API_URL).toBe(`${ts.server.url}${E2B_PREFIX}`);
  expect(process.env.E2B_SANDBOX_URL).toBe(`${ts.server.url}${E2B_PREFIX}`);
  sbx = await Sandbox.create({ metadata: { [TEST_LABEL_KEY]: ts.t.runId }, envs: { GREETING: 'hi' }, timeoutMs: 600_000 });
  await ts.server.engine.attestations.idle();
});

afterAll(async () => {
  restoreEnv();
  if (ts) removeServerFile(ts.t.home);
  await ts?.close();
});

describe('the e2b SDK against Warden', () => {
  it('writes, runs with streamed output, reads, lists and checks files in a Warden sandbox', async () => {
    const info = await sbx.getInfo();
    expect(info).toMatchObject({ sandboxId: sbx.sandboxId, templateId: 'base', metadata: { [TEST_LABEL_KEY]: ts.t.runId } });
    // timeoutMs is the sandbox's TTL; envs are the sandbox's env; ~ is the workspace.
    expect(info.endAt.getTime() - Date.now()).toBeGreaterThan(0);
    expect(info.endAt.getTime() - Date.now()).toBeLessThanOrEqual(600_000);
    expect((await sbx.commands.run('echo $GREETING; cd ~ && pwd')).stdout).toBe('hi\n/workspace\n');
    await sbx.files.makeDir('sub');
    expect((await sbx.commands.run('pwd', { cwd: 'sub' })).stdout).toBe('/workspace/sub\n');
    expect((await sbx.commands.run('pwd', { cwd: '/home/user/sub' })).stdout).toBe('/workspace/sub\n');
    await sbx.files.remove('sub');

    await sbx.files.write('/home/user/hello.py', 'print("hello from", 6 * 7)\n');
    const chunks: string[] = [];
    const run = await sbx.commands.run('python3 hello.py | tee out.txt', { onStdout: (d) => void chunks.push(d) });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe('hello from 42\n');
    expect(chunks.join('')).toBe('hello from 42\n');
    expect(await sbx.files.read('out.txt')).toBe('hello from 42\n');

    const names = (await sbx.files.list('/home/user')).map((e) => [e.name, e.type]);
    expect(names).toEqual([
      ['hello.py', 'file'],
      ['out.txt', 'file'],
    ]);
    expect(await sbx.files.exists('/workspace/hello.py')).toBe(true);
    expect(await sbx.files.exists('nothing-here')).toBe(false);
    expect((await sbx.files.getInfo('/home/user')).type).toBe('dir');

    // The agent's run holds every step, as the agent API's would.
    const runs = ts.server.gateway.runs.list({ agent: AGENT });
    const detail = ts.server.gateway.runs.detail(runs.find((r) => r.sandboxId === sbx.sandboxId)!.id);
    expect(detail.toolCalls.map((c) => c.tool)).toEqual(
      expect.arrayContaining(['sandbox.create', 'file.write', 'exec', 'file.read', 'file.list']),
    );
    const kinds = ts.audit.entries.filter((e) => e.actor === AGENT).map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['sandbox.created', 'file.written', 'exec.started', 'exec.finished', 'file.read']));
  });

  it('writes several files in one call, bytes intact, each its own call in the run', async () => {
    const bytes = new Uint8Array([0, 255, 1, 254, 10, 13]);
    const written = await sbx.files.write([
      { path: 'many/a.txt', data: 'A' },
      { path: '/home/user/many/b.bin', data: bytes.buffer },
    ]);
    expect(written.map((w) => w.path)).toEqual(['/workspace/many/a.txt', '/workspace/many/b.bin']);
    expect(await sbx.files.read('many/b.bin', { format: 'bytes' })).toEqual(bytes);
    expect((await sbx.files.list('many')).map((e) => e.name)).toEqual(['a.txt', 'b.bin']);
    await sbx.files.write('many/z.txt', 'zipped on the way\n', { gzip: true });
    expect(await sbx.files.read('many/z.txt')).toBe('zipped on the way\n');
  });

  it('makes directories with their parents, false when already there, only in the workspace', async () => {
    expect(await sbx.files.makeDir('/home/user/made/deep')).toBe(true);
    expect(await sbx.files.makeDir('made/deep')).toBe(false);
    expect(await sbx.files.makeDir('made')).toBe(false);
    expect((await sbx.files.getInfo('made/deep')).type).toBe('dir');
    expect((await failure(sbx.files.makeDir('/etc/nope'))).message).toMatch(/workspace/);
    // A symlink in the workspace is never followed out of it.
    await sbx.commands.run('ln -s /etc ~/out-link');
    expect((await failure(sbx.files.makeDir('out-link/nope'))).message).toContain('symlink');
    expect((await failure(sbx.files.read('out-link/hostname'))).message).toContain('symlink');
    const entries = ts.audit.entries.filter(
      (e) =>
        e.kind === 'file.dir-made' && e.sandboxId === sbx.sandboxId && (e.payload as { path: string }).path.startsWith('/workspace/made'),
    );
    expect(entries.map((e) => (e.payload as { path: string; created: boolean }).created)).toEqual([true, false, false]);
  });

  it('renames files and removes files, empty directories and symlinks (directories with content: e2b-files.int.spec.ts)', async () => {
    await sbx.files.write('mv/src.txt', 'moving\n');
    const moved = await sbx.files.rename('mv/src.txt', '/home/user/mv/dst.txt');
    expect(moved).toMatchObject({ name: 'dst.txt', type: 'file', path: '/workspace/mv/dst.txt' });
    expect(await sbx.files.read('mv/dst.txt')).toBe('moving\n');
    expect(await sbx.files.exists('mv/src.txt')).toBe(false);
    expect((await failure(sbx.files.rename('mv/dst.txt', '/etc/dst.txt'))).message).toMatch(/workspace/);
    // Through a symlink out of the workspace (made in the makeDir case): refused both ways.
    expect((await failure(sbx.files.remove('out-link/hostname'))).message).toContain('symlink');
    expect((await failure(sbx.files.rename('mv/dst.txt', 'out-link/dst.txt'))).message).toContain('symlink');
    await sbx.files.remove('mv/dst.txt');
    await sbx.files.remove('mv');
    expect(await sbx.files.exists('mv')).toBe(false);
    // Removing a symlink removes the link, never what it points to.
    await sbx.commands.run('mkdir -p ~/keep && echo kept > ~/keep/k.txt && ln -s ~/keep ~/keep-link');
    await sbx.files.remove('keep-link');
    expect(await sbx.files.read('keep/k.txt')).toBe('kept\n');
    const kinds = ts.audit.entries.filter((e) => e.sandboxId === sbx.sandboxId).map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['file.moved', 'file.removed']));
  });

  it('gives a failing command the SDK CommandExitError with its exit code and stderr', async () => {
    const err = await failure(sbx.commands.run('echo oops >&2; exit 3'));
    expect(err).toBeInstanceOf(CommandExitError);
    expect((err as CommandExitError).exitCode).toBe(3);
    expect((err as CommandExitError).stderr).toBe('oops\n');
  });

  it("refuses a command Warden's policy denies with an error that says so", async () => {
    const err = await failure(sbx.commands.run('touch /workspace/x'));
    expect(err.message).toContain('Warden policy');
    expect(err.message).toContain('touch');
    expect(await sbx.files.exists('x')).toBe(false);
  });

  it('waits on an ask: a person approving lets the command run, a person denying refuses it as policy', async () => {
    const decide = (decision: 'approve-once' | 'deny') => {
      const off = ts.server.engine.events.on('approval.requested', (a) => {
        off();
        void ts.server.gateway['approval.decide']({ id: a.id, decision, by: 'user' });
      });
    };
    decide('approve-once');
    expect((await sbx.commands.run('git --version')).stdout).toMatch(/^git version/);
    decide('deny');
    const err = await failure(sbx.commands.run('git --version'));
    expect(err.message).toContain('Warden policy');
    const decided = ts.audit.entries.filter((e) => e.kind === 'approval.decided' && e.sandboxId === sbx.sandboxId);
    expect(decided.map((e) => (e.payload as { decision: string }).decision)).toEqual(['approve-once', 'deny']);
  });

  it('kills a background command', async () => {
    let ready!: () => void;
    const seen = new Promise<void>((resolve) => (ready = resolve));
    const handle = await sbx.commands.run('echo ready; sleep 300', {
      background: true,
      onStdout: (d) => {
        if (d.includes('ready')) ready();
      },
    });
    expect((await sbx.commands.list()).map((p) => p.pid)).toContain(handle.pid);
    await seen;
    expect(await handle.kill()).toBe(true);
    expect(await failure(handle.wait())).toBeInstanceOf(CommandExitError);
    expect(await sbx.commands.list()).toEqual([]);
  });

  it('keeps files confined to the workspace', async () => {
    const err = await failure(sbx.files.read('/etc/passwd'));
    expect(err.message).toMatch(/workspace/);
    await failure(sbx.files.read('/home/user/../../etc/passwd'));
  });

  it('lists the agent sandboxes, samples their metrics, and names what Warden does not support', async () => {
    const box = await ts.server.engine.resolveSandbox(sbx.sandboxId);
    const [metric] = await sbx.getMetrics();
    expect(metric!.memTotal).toBe(box.limits.memoryBytes);
    expect(metric!.memUsed).toBeGreaterThan(0);
    expect(metric!.cpuCount).toBe(box.limits.cpus);
    const listed = await Sandbox.list().nextItems();
    expect(listed.map((s) => s.sandboxId)).toContain(sbx.sandboxId);
    const byMetadata = (value: string) => Sandbox.list({ query: { metadata: { [TEST_LABEL_KEY]: value } } }).nextItems();
    expect((await byMetadata(ts.t.runId)).map((s) => s.sandboxId)).toEqual([sbx.sandboxId]);
    expect(await byMetadata('another-run')).toEqual([]);
    expect(await Sandbox.list({ query: { state: ['paused'] } }).nextItems()).toEqual([]);
    for (const unsupported of [() => sbx.commands.run('id', { user: 'root' }), () => sbx.files.read('hello.py', { user: 'root' })])
      expect((await failure(unsupported())).message).toContain('not supported by Warden');
  });

  it('refuses a wrong key with the SDK AuthenticationError, an unknown template by name, and another agent its sandbox', async () => {
    expect(await failure(Sandbox.create({ apiKey: 'wrd_not-a-token' }))).toBeInstanceOf(AuthenticationError);
    const unknown = await failure(Sandbox.create('python-data-science'));
    expect(unknown.message).toContain('python-data-science');
    expect(unknown.message).toContain('base');
    const other = ts.server.tokens.create('someone-else').token;
    const err = await failure(Sandbox.connect(sbx.sandboxId, { apiKey: other }));
    expect(err.message).toMatch(/not found|404/i);
  });

  it('holds an envd access token to its own sandbox, and only while its agent token lives', async () => {
    const base = `${ts.server.url}${E2B_PREFIX}`;
    const second = ts.server.tokens.create(AGENT);
    const detail = await fetch(`${base}/sandboxes/${sbx.sandboxId}`, { headers: { 'X-API-KEY': second.token } });
    expect(detail.status).toBe(200);
    const { envdAccessToken } = (await detail.json()) as { envdAccessToken: string };
    const listDir = (sandboxId: string) =>
      fetch(`${base}/filesystem.Filesystem/ListDir`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Access-Token': envdAccessToken, 'E2b-Sandbox-Id': sandboxId },
        body: JSON.stringify({ path: '/home/user', depth: 1 }),
      });
    expect((await listDir(sbx.sandboxId)).status).toBe(200);
    const elsewhere = await listDir('0'.repeat(64));
    expect(elsewhere.status).toBe(401);
    expect(await elsewhere.json()).toMatchObject({ code: 'unauthenticated' });
    // A command running under a token that is revoked ends with its connection.
    const secondSbx = await Sandbox.connect(sbx.sandboxId, { apiKey: second.token });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const handle = await secondSbx.commands.run('echo up; sleep 300', { background: true, onStdout: () => started() });
    await running;
    const finished = ts.audit.nextEntry((e) => e.kind === 'exec.finished' && e.sandboxId === sbx.sandboxId);
    // As `warden token revoke` does it, from another process's view of the home.
    new TokenStore(ts.t.home).revoke(second.info.id);
    await failure(handle.wait());
    expect((await finished).payload).toMatchObject({ cancelled: 'tokenRevoked' });
    expect((await listDir(sbx.sandboxId)).status).toBe(401);
  });

  it('`warden e2b env` says what to start when no Warden serves the home', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'warden-e2b-env-'));
    try {
      const r = await warden(['e2b', 'env'], empty);
      expect(r.status).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('warden serve');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("trips the run's breaker when commands keep failing; the SDK is told Warden's breaker is open", async () => {
    // The default policy opens the breaker after 8 failures in a row; earlier cases may have left some.
    const outcomes: string[] = [];
    for (let i = 0; i < 9 && outcomes.at(-1) !== 'refused'; i++) {
      const err = await failure(sbx.commands.run('exit 1'));
      outcomes.push(err instanceof CommandExitError ? 'exit 1' : 'refused');
      if (!(err instanceof CommandExitError)) expect(err.message).toContain("Warden's breaker is open");
    }
    expect(outcomes.at(-1)).toBe('refused');
    expect(outcomes).toContain('exit 1');
    // Files go through the same run, so they are refused too, with the same words.
    expect((await failure(sbx.files.write('after-breaker.txt', 'x'))).message).toContain("Warden's breaker is open");
    const run = ts.server.gateway.runs.list({ agent: AGENT }).find((r) => r.sandboxId === sbx.sandboxId)!;
    expect(run.breaker.state).toBe('open');
    const denied = ts.audit.entries.filter((e) => e.kind === 'policy.denied' && e.sandboxId === sbx.sandboxId);
    expect(denied.map((e) => JSON.stringify(e.payload)).filter((p) => p.includes('"breaker"'))).toHaveLength(2);
  });

  it('kills the sandbox', async () => {
    await sbx.kill();
    expect(await Sandbox.kill(sbx.sandboxId)).toBe(false);
    expect((await ts.server.engine['sandbox.list']()).map((s) => s.id)).not.toContain(sbx.sandboxId);
    // The chain holds: `warden audit verify` on this home.
    const verify = spawnSync(process.execPath, ['--import', 'tsx', 'electron/cli/index.ts', 'audit', 'verify', '--json'], {
      env: { ...process.env, WARDEN_HOME: ts.t.home },
      encoding: 'utf8',
    });
    expect(verify.status, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true });
  });
});
