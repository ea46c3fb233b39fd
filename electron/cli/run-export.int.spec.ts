// `warden run export` on real Podman and the host's real git: a run modifies, adds and deletes files
// (and adds, changes and deletes binaries); exported to a fresh repository holding the run's starting
// point, the new branch's tree has exactly those changes, binaries byte for byte, while the checked-out
// working tree stays as it was; the patch file applies with `git apply`, a new binary in it as a git
// binary patch (byte-exact), and names the binaries it cannot carry; a dirty repository and an existing
// branch are refused; each export is a `run.exported` ledger entry naming the digest of the diff it
// was made from, which its `run.diffed` entry also names.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeServerFile, writeServerFile } from '../server/server-file.js';
import { openTestServer, type TestServer } from '../test-support/test-server.js';
import { runCliInProcess, type CliAnswer } from '../test-support/cli-in-process.js';
import { registerRun } from './commands/run.js';
import { diffDigest } from '../engine/diff/diff-digest.js';

const START = {
  'keep.txt': 'unchanged\n',
  'src/app.py': 'a = 1\nb = 2\nc = 3\n',
  'old.txt': 'to be removed\n',
  'run.sh': 'echo hi\n',
  'data.bin': 'one\0\x01\x02',
  'gone.bin': 'gone\0\x03',
};
const NEW_DATA = Buffer.from([0x74, 0x77, 0x6f, 0, 0x05, 0x06, 0xff, 0xfe]);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
let toolSha = '';

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
  await work.request('files.write', { params: { id: box }, query: { path: 'data.bin' }, body: NEW_DATA });
  expect((await work.exec(box, { cmd: ['rm', 'gone.bin'] })).code).toBe(0);
  toolSha = sha256(await work.request('files.read', { params: { id: box }, query: { path: 'tool.bin' } }));
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
      'data.bin',
      'empty.txt',
      'keep.txt',
      'notes/new.md',
      'run.sh',
      'src/app.py',
      'tool.bin',
    ]);
    // Binaries byte for byte: the new one (a git binary patch), the changed one (its bytes staged); the deleted one is gone.
    expect(sha256(blob(repo, `${commit}:tool.bin`))).toBe(toolSha);
    expect(blob(repo, `${commit}:data.bin`).equals(NEW_DATA)).toBe(true);
    expect(git(repo, 'ls-tree', commit, 'run.sh')).toMatch(/^100755 /);
    expect(git(repo, 'show', `${commit}:empty.txt`)).toBe('');
    expect(git(repo, 'show', `${commit}:src/app.py`)).toBe('a = 1\nb = 20\nc = 3');
    expect(git(repo, 'show', `${commit}:notes/new.md`)).toBe('# new');
    expect(git(repo, 'show', `${commit}:keep.txt`)).toBe('unchanged');
    const message = git(repo, 'log', '-1', '--format=%B', commit);
    expect(message).toContain(`Warden run ${runId} by agent alice in sandbox t-${ts.t.runId}-export`);
    expect(message).toMatch(/Ledger head: seq \d+/);
    expect(message).toContain('Also 2 changed or deleted binary file(s)');
    expect(message).not.toContain('Not in this commit');
    expect(r.out).not.toContain('not exported');

    // The checkout is where it was, with the bytes it had.
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(repo, 'src/app.py'), 'utf8')).toBe(START['src/app.py']);
    expect(existsSync(join(repo, 'old.txt'))).toBe(true);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);

    const entry = ts.audit.entries.filter((e) => e.kind === 'run.exported').at(-1)!;
    expect(entry).toMatchObject({
      actor: 'user',
      payload: { runId, agent: 'alice', files: 8, binary: 3, left: 0, to: { kind: 'git', branch: 'agent/work', commit } },
    });
    // The diff it was made from is on the record too, with the same digest.
    const diffed = ts.audit.entries.filter((e) => e.kind === 'run.diffed').at(-1)!;
    expect(diffed).toMatchObject({ actor: 'user', payload: { runId, diffSha256: (entry.payload as { diffSha256: string }).diffSha256 } });

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

  it('writes a patch that git apply takes, a new binary byte for byte, naming the binaries it cannot carry', async () => {
    const file = join(scratch, 'run.patch');
    const r = await warden('run', 'export', runId, '--patch', file);
    expect(r.code, r.err).toBe(0);
    const patch = readFileSync(file, 'utf8');
    expect(patch).toContain('diff --git a/tool.bin b/tool.bin\nnew file mode 100755\nindex 0000000000000000000000000000000000000000..');
    expect(patch).toContain('GIT binary patch\nliteral ');
    expect(patch).toMatch(/^# {3}modified "data\.bin" \(binary, 6 → 8 bytes; a patch of it needs the old contents\)$/m);
    expect(patch).toMatch(/^# {3}deleted "gone\.bin" \(binary, 6 → 0 bytes; a patch of it needs the old contents\)$/m);
    const repo = startRepo('by-patch');
    git(repo, 'apply', '--index', file);
    expect(sha256(readFileSync(join(repo, 'tool.bin')))).toBe(toolSha);
    expect(git(repo, 'ls-files', '-s', 'tool.bin')).toMatch(/^100755 /);
    expect(readFileSync(join(repo, 'src/app.py'), 'utf8')).toBe('a = 1\nb = 20\nc = 3\n');
    expect(existsSync(join(repo, 'old.txt'))).toBe(false);
    expect(readFileSync(join(repo, 'notes/new.md'), 'utf8')).toBe('# new\n');
    expect(git(repo, 'ls-files', '-s', 'run.sh', 'empty.txt')).toMatch(/^100644 \S+ 0\tempty\.txt\n100755 \S+ 0\trun\.sh$/);
    const entry = ts.audit.entries.filter((e) => e.kind === 'run.exported').at(-1)!;
    expect(entry.payload).toMatchObject({ files: 6, binary: 1, left: 2, to: { kind: 'patch', path: file } });

    const both = await warden('run', 'export', runId, '--patch', file, '--repo', scratch, '--branch', 'x');
    expect(both.code).not.toBe(0);
    expect(both.err).toContain('give either --patch FILE or --repo DIR --branch NAME');
  });
});

describe('warden run diff and the record', () => {
  it('records the digest of exactly the diff it returns', async () => {
    const diff = await ts.user().request('run.diff', { params: { run: runId } });
    const entry = ts.audit.entries.filter((e) => e.kind === 'run.diffed').at(-1)!;
    expect(entry).toMatchObject({ actor: 'user', payload: { runId, agent: 'alice', files: diff.files.length, totals: diff.totals } });
    // Recomputed from the answer alone (canonical JSON, SHA-256), it is the one on the record.
    expect((entry.payload as { diffSha256: string }).diffSha256).toBe(diffDigest(diff));
    // An agent that asks for its own run's diff is on the record under its name.
    await ts.agent('alice', 'export-work').request('run.diff', { params: { run: runId } });
    expect(ts.audit.entries.filter((e) => e.kind === 'run.diffed').at(-1)).toMatchObject({ actor: 'alice' });
  });
});

function blob(repo: string, spec: string): Buffer {
  const r = spawnSync('git', ['cat-file', 'blob', spec], { cwd: repo });
  expect(r.status, r.stderr.toString()).toBe(0);
  return r.stdout;
}
