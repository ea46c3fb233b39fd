// With `warden serve` up in the same WARDEN_HOME, the CLI goes through it (one engine owner, the UI
// sees the commands as runs) and keeps its own contract: streams, exit codes, 124 on timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTestServer, type TestServer } from '../test-support/test-server.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';
import { writeServerFile, removeServerFile } from '../server/server-file.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'warden.mjs');
let ts: TestServer;

/** Async: the server runs in this process and must keep answering while the CLI waits on it. */
function warden(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, WARDEN_HOME: ts.t.home, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

beforeAll(async () => {
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-cli.mjs')], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
  ts = await openTestServer();
  // What startServer does for `warden serve`: say where it listens (this process is its pid).
  writeServerFile(ts.t.home, { pid: process.pid, port: ts.server.port, url: ts.server.url, startedAt: new Date().toISOString() });
});

afterAll(async () => {
  removeServerFile(ts.t.home);
  await ts.close();
});

describe('the CLI with a running server', () => {
  it('creates, execs and removes through the server, each command its own run, one ledger chain', async () => {
    const name = `t-${ts.t.runId}-cli`;
    const created = await warden(['sandbox', 'create', '--name', name, '--label', `${TEST_LABEL_KEY}=${ts.t.runId}`, '--json']);
    expect(created.status, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name, state: 'running' });

    const run = await warden(['exec', name, '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(run.status).toBe(3);
    expect(run.stdout).toBe('out\n');
    expect(run.stderr).toBe('err\n');

    const slow = await warden(['exec', '--timeout', '1', name, '--', 'sleep', '20']);
    expect(slow.status).toBe(124);
    expect(slow.stderr).toMatch(/timed out after 1s/);

    const cliRuns = ts.server.gateway.runs.list({}).filter((r) => r.key?.startsWith('cli-'));
    expect(cliRuns.length).toBe(3);
    expect(cliRuns.every((r) => r.agent === 'user')).toBe(true);

    // Kept in this process on request: the server sees no new run.
    const local = await warden(['exec', name, '--', 'true'], { WARDEN_LOCAL: '1' });
    expect(local.status, local.stderr).toBe(0);
    expect(ts.server.gateway.runs.list({}).filter((r) => r.key?.startsWith('cli-')).length).toBe(3);

    const removed = await warden(['sandbox', 'rm', name, '--json']);
    expect(removed.status, removed.stderr).toBe(0);
    const ls = await warden(['sandbox', 'ls', '--json']);
    expect((JSON.parse(ls.stdout) as Array<{ name: string }>).some((s) => s.name === name)).toBe(false);

    const kinds = ts.audit.entries.filter((e) => e.sandboxId !== null || e.kind.startsWith('sandbox')).map((e) => e.kind);
    expect(kinds).toContain('exec.finished');
    const verify = await warden(['audit', 'verify', '--json']);
    expect(verify.status, verify.stdout).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, firstBad: null });
  });
});
