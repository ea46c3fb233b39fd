// `warden run export` on real Podman and the host's real git: a run modifies, adds and deletes files
// (and writes a binary); exported to a fresh repository holding the run's starting point, the new
// branch's tree has exactly those changes while the checked-out working tree stays as it was; the
// patch file applies with `git apply` and names the binary it cannot carry; a dirty repository and an
// existing branch are refused; each export is a `run.exported` ledger entry.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeServerFile, writeServerFile } from '../server/server-file.js';
import { openTestServer, type TestServer } from '../test-support/test-server.js';
import { runCliInProcess, type CliAnswer } from '../test-support/cli-in-process.js';
import { registerRun } from './commands/run.js';

const START = { 'keep.txt': 'unchanged\n', 'src/app.py': 'a = 1\nb = 2\nc = 3\n', 'old.txt': 'to be removed\n', 'run.sh': 'echo hi\n' };

let ts: TestServer;
let runId: string;
let scratch: string;

beforeAll(async () => {
  ts = await openTestServer();
  scratch = mkdtempSync(join(tmpdir(), 'warden-export-spec-'));
  const setup = ts.agent('alice', 'export-setup');
  const box = (await setup.request('sandbox.create', { body: { name: `t-${ts.t.runId}-export`, labels: ts.labels } })).id;
  for (const [path, text] of Object.entries(START))
    await setup.request('files.write', { params: { id: box }, query: { path }, body: Buffer.from(text) });
  const work = ts.agent('alice', 'export-work');
  await work.request('files.write', { params: { id: box }, query: { path: 'src/app.py' }, body: Buffer.from('a = 1\nb = 20\nc = 3\n') });
  await work.request('files.write', { params: { id: box }, query: { path: 'notes/new.md' }, body: Buffer.from('# new\n') });
  expect((await work.exec(box, { cmd: ['rm', 'old.txt'] })).code).toBe(0);
  expect((await work.exec(box, { cmd: ['cp', '/bin/true', 'tool.bin'] })).code).toBe(0);
  expect((await work.exec(box, { cmd: ['sh', '-c', 'chmod 755 run.sh && : > empty.txt'] })).code).toBe(0);
  runId = (await ts.user().request('run.list', { query: { agent: 'alice' } })).find((r) => r.key === 'export-work')!.id;
});

afterAll(async () => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  if (ts) removeServerFile(ts.t.home);
  await ts?.close();
});

async function warden(...args: string[]): Promise<CliAnswer> {
  const saved = process.env.WARDEN_HOME;
  process.env.WARDEN_HOME = ts.t.home;
  writeServerFile(ts.t.home, { pid: process.pid, port: ts.server.port, url: ts.server.url, startedAt: new Date().toISOString() });
  try {
    return await runCliInProcess([registerRun], args);
  } finally {
    if (saved === undefined) delete process.env.WARDEN_HOME;
    else process.env.WARDEN_HOME = saved;
  }
}

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=Spec', '-c', 'user.email=spec@localhost', ...args], { cwd, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

/** A fresh repository whose one commit is the run's starting point. */
function startRepo(name: string): string {
  const dir = join(scratch, name);
  for (const [path, text] of Object.entries(START)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  git(dir, 'init', '--quiet', '--initial-branch=main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'start');
  return dir;
}

describe('warden run export', () => {
  it('commits exactly the run’s changes on a new branch and leaves the working tree alone', async () => {
    const repo = startRepo('clean');
    const head = git(repo, 'rev-parse', 'HEAD');
    const r = await warden('run', 'export', runId, '--repo', repo, '--branch', 'agent/work');
    expect(r.code, r.err).toBe(0);
    const commit = r.out.split('\n')[0]!;
    expect(git(repo, 'rev-parse', 'refs/heads/agent/work')).toBe(commit);
    expect(git(repo, 'rev-parse', `${commit}^`)).toBe(head);
    expect(git(repo, 'ls-tree', '-r', '--name-only', commit).split('\n')).toEqual([
      'empty.txt',
      'keep.txt',
      'notes/new.md',
      'run.sh',
      'src/app.py',
    ]);
    expect(git(repo, 'ls-tree', commit, 'run.sh')).toMatch(/^100755 /);
    expect(git(repo, 'show', `${commit}:empty.txt`)).toBe('');
    expect(git(repo, 'show', `${commit}:src/app.py`)).toBe('a = 1\nb = 20\nc = 3');
    expect(git(repo, 'show', `${commit}:notes/new.md`)).toBe('# new');
    expect(git(repo, 'show', `${commit}:keep.txt`)).toBe('unchanged');
    const message = git(repo, 'log', '-1', '--format=%B', commit);
    expect(message).toContain(`Warden run ${runId} by agent alice in sandbox t-${ts.t.runId}-export`);
    expect(message).toMatch(/Ledger head: seq \d+/);
    expect(message).toMatch(/"tool\.bin": binary/);
    expect(r.out).toContain('not exported: "tool.bin" (binary');

    // The checkout is where it was, with the bytes it had.
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(repo, 'src/app.py'), 'utf8')).toBe(START['src/app.py']);
    expect(existsSync(join(repo, 'old.txt'))).toBe(true);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);

    const entry = ts.audit.entries.filter((e) => e.kind === 'run.exported').at(-1)!;
    expect(entry).toMatchObject({
      actor: 'user',
      payload: { runId, agent: 'alice', files: 5, left: 1, to: { kind: 'git', branch: 'agent/work', commit } },
    });

    const again = await warden('run', 'export', runId, '--repo', repo, '--branch', 'agent/work');
    expect(again.code).not.toBe(0);
    expect(again.err).toContain('branch agent/work already exists');
  });

  it('refuses a dirty repository and touches nothing', async () => {
    const repo = startRepo('dirty');
    writeFileSync(join(repo, 'keep.txt'), 'my own edit\n');
    const r = await warden('run', 'export', runId, '--repo', repo, '--branch', 'agent/work');
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('has uncommitted changes');
    expect(spawnSync('git', ['rev-parse', '--verify', '--quiet', 'refs/heads/agent/work'], { cwd: repo }).status).not.toBe(0);
    expect(readFileSync(join(repo, 'keep.txt'), 'utf8')).toBe('my own edit\n');
  });

  it('writes a patch that git apply takes, naming the binary file it cannot carry', async () => {
    const file = join(scratch, 'run.patch');
    const r = await warden('run', 'export', runId, '--patch', file);
    expect(r.code, r.err).toBe(0);
    const patch = readFileSync(file, 'utf8');
    expect(patch).toMatch(/^# {3}added "tool\.bin" \(binary, 0 → \d+ bytes\)$/m);
    const repo = startRepo('by-patch');
    git(repo, 'apply', '--index', file);
    expect(readFileSync(join(repo, 'src/app.py'), 'utf8')).toBe('a = 1\nb = 20\nc = 3\n');
    expect(existsSync(join(repo, 'old.txt'))).toBe(false);
    expect(readFileSync(join(repo, 'notes/new.md'), 'utf8')).toBe('# new\n');
    expect(git(repo, 'ls-files', '-s', 'run.sh', 'empty.txt')).toMatch(/^100644 \S+ 0\tempty\.txt\n100755 \S+ 0\trun\.sh$/);
    const entry = ts.audit.entries.filter((e) => e.kind === 'run.exported').at(-1)!;
    expect(entry.payload).toMatchObject({ to: { kind: 'patch', path: file } });

    const both = await warden('run', 'export', runId, '--patch', file, '--repo', scratch, '--branch', 'x');
    expect(both.code).not.toBe(0);
    expect(both.err).toContain('give either --patch FILE or --repo DIR --branch NAME');
  });
});
