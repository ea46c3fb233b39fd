// Workspace diffs through the agent API on real Podman: one run writes files, a second changes one,
// adds a text and a binary file, deletes one and changes a mode; the run's diff lists exactly that
// (unified diffs for text, a summary for the binary), the sandbox's diff everything since create,
// an agent cannot read another agent's diffs, and `warden run diff` / `warden sandbox diff` print
// the same through the running server.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WardenError } from '../../shared/errors.js';
import type { WorkspaceDiff } from '../../shared/types/diff.js';
import { removeServerFile, writeServerFile } from '../server/server-file.js';
import { openTestServer, type TestServer } from '../test-support/test-server.js';
import { registerRun } from './commands/run.js';
import { registerSandbox } from './commands/sandbox.js';
import { errorCodeOf } from '../test-support/error-code.js';
import { runCliInProcess, type CliAnswer } from '../test-support/cli-in-process.js';

let ts: TestServer;
let box: string;
let secondRun: string;

beforeAll(async () => {
  ts = await openTestServer();
  const first = ts.agent('alice', 'diff-setup');
  box = (await first.request('sandbox.create', { body: { name: `t-${ts.t.runId}-diff`, labels: ts.labels } })).id;
  const write = (path: string, text: string) =>
    first.request('files.write', { params: { id: box }, query: { path }, body: Buffer.from(text) });
  await write('keep.txt', 'unchanged\n');
  await write('src/app.py', 'a = 1\nb = 2\nc = 3\n');
  await write('old.txt', 'to be removed\n');
  await write('run.sh', 'echo hi\n');

  const second = ts.agent('alice', 'diff-work');
  await second.request('files.write', { params: { id: box }, query: { path: 'src/app.py' }, body: Buffer.from('a = 1\nb = 20\nc = 3\n') });
  await second.request('files.write', { params: { id: box }, query: { path: 'notes/new.md' }, body: Buffer.from('# new\n') });
  expect((await second.exec(box, { cmd: ['rm', 'old.txt'] })).code).toBe(0);
  expect((await second.exec(box, { cmd: ['chmod', '755', 'run.sh'] })).code).toBe(0);
  expect((await second.exec(box, { cmd: ['cp', '/bin/true', 'tool.bin'] })).code).toBe(0);
  secondRun = (await ts.user().request('run.list', { query: { agent: 'alice' } })).find((r) => r.key === 'diff-work')!.id;
});

afterAll(async () => {
  if (ts) removeServerFile(ts.t.home);
  await ts?.close();
});

/** `warden …` in this process, against the test server (found through its server.json, as the CLI finds serve). */
async function warden(...args: string[]): Promise<CliAnswer> {
  const saved = process.env.WARDEN_HOME;
  process.env.WARDEN_HOME = ts.t.home;
  writeServerFile(ts.t.home, { pid: process.pid, port: ts.server.port, url: ts.server.url, startedAt: new Date().toISOString() });
  try {
    return await runCliInProcess([registerRun, registerSandbox], args);
  } finally {
    if (saved === undefined) delete process.env.WARDEN_HOME;
    else process.env.WARDEN_HOME = saved;
  }
}

describe('workspace diffs', () => {
  it('a run’s diff lists exactly what it changed, with unified diffs for text and a summary for binary', async () => {
    const diff = await ts.user().request('run.diff', { params: { run: secondRun } });
    expect(diff.base).toMatchObject({ kind: 'run', id: secondRun });
    expect(diff.files.map((f) => [f.path, f.change])).toEqual([
      ['notes/new.md', 'added'],
      ['old.txt', 'deleted'],
      ['run.sh', 'modified'],
      ['src/app.py', 'modified'],
      ['tool.bin', 'added'],
    ]);
    expect(diff.totals).toEqual({ added: 2, modified: 2, deleted: 1 });
    const file = (path: string) => diff.files.find((f) => f.path === path)!;
    expect(file('src/app.py').diff).toBe('--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n');
    expect(file('notes/new.md').diff).toBe('--- /dev/null\n+++ b/notes/new.md\n@@ -0,0 +1 @@\n+# new\n');
    expect(file('old.txt').diff).toBe('--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-to be removed\n');
    expect(file('run.sh')).toMatchObject({ diff: null, summary: 'mode 644 → 755' });
    expect(file('tool.bin')).toMatchObject({ diff: null, after: { type: 'file' } });
    expect(file('tool.bin').summary).toMatch(/^binary, 0 → \d+ bytes$/);

    // The text diffs are real patches: applied to the run's start they give the workspace now.
    const dir = mkdtempSync(join(tmpdir(), 'warden-diff-'));
    try {
      writeFileSync(join(dir, 'app.py'), 'a = 1\nb = 2\nc = 3\n');
      writeFileSync(join(dir, 'app.patch'), file('src/app.py').diff!);
      const r = spawnSync('patch', ['-p2', '-i', 'app.patch'], { cwd: dir, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(join(dir, 'app.py'), 'utf8')).toBe('a = 1\nb = 20\nc = 3\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the sandbox’s diff is everything since its create: what exists now, each file added', async () => {
    const diff = await ts.agent('alice').request('sandbox.diff', { params: { id: box } });
    expect(diff.base.kind).toBe('sandbox');
    expect(diff.files.map((f) => [f.path, f.change])).toEqual([
      ['keep.txt', 'added'],
      ['notes/new.md', 'added'],
      ['run.sh', 'added'],
      ['src/app.py', 'added'],
      ['tool.bin', 'added'],
    ]);
    expect(diff.files.find((f) => f.path === 'src/app.py')!.diff).toContain('+b = 20\n');
  });

  it('a run that only read has no baseline, and says so', async () => {
    const reader = ts.agent('alice', 'diff-read-only');
    await reader.request('files.read', { params: { id: box }, query: { path: 'keep.txt' } });
    const id = (await ts.user().request('run.list', { query: { agent: 'alice' } })).find((r) => r.key === 'diff-read-only')!.id;
    const err = await ts
      .user()
      .request('run.diff', { params: { run: id } })
      .catch((e: WardenError) => e);
    expect(err).toMatchObject({ code: 'E_NOT_FOUND', message: `no workspace baseline for run ${id}` });
  });

  it('another agent sees neither diff', async () => {
    const bob = ts.agent('bob');
    expect(await errorCodeOf(bob.request('run.diff', { params: { run: secondRun } }))).toBe('E_NOT_FOUND');
    expect(await errorCodeOf(bob.request('sandbox.diff', { params: { id: box } }))).toBe('E_NOT_FOUND');
  });

  it('warden run diff and warden sandbox diff print the same, as text and as --json', async () => {
    const json = await warden('run', 'diff', secondRun, '--json');
    expect(json.code, json.err).toBe(0);
    const viaApi = await ts.user().request('run.diff', { params: { run: secondRun } });
    expect((JSON.parse(json.out) as WorkspaceDiff).files).toEqual(viaApi.files);
    const text = await warden('run', 'diff', secondRun);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain(`since the run ${secondRun}`);
    expect(text.out).toContain('2 added, 2 modified, 1 deleted');
    expect(text.out).toMatch(/^D {2}old\.txt {2}\(text, \+0 −1\)$/m);
    expect(text.out).toContain('--- a/src/app.py\n+++ b/src/app.py\n');
    const sandbox = await warden('sandbox', 'diff', `t-${ts.t.runId}-diff`, '--json');
    expect(sandbox.code, sandbox.err).toBe(0);
    expect((JSON.parse(sandbox.out) as WorkspaceDiff).files.map((f) => f.path)).toEqual([
      'keep.txt',
      'notes/new.md',
      'run.sh',
      'src/app.py',
      'tool.bin',
    ]);
    // Without a server (WARDEN_LOCAL=1), the engine in this process answers the same.
    process.env.WARDEN_LOCAL = '1';
    try {
      const local = await warden('sandbox', 'diff', `t-${ts.t.runId}-diff`, '--json');
      expect(local.code, local.err).toBe(0);
      expect((JSON.parse(local.out) as WorkspaceDiff).files).toEqual((JSON.parse(sandbox.out) as WorkspaceDiff).files);
    } finally {
      delete process.env.WARDEN_LOCAL;
    }
    const missing = await warden('run', 'diff', 'run_nope');
    expect(missing.code).toBe(4);
    expect(missing.err).toContain('no run run_nope');
  });
});
