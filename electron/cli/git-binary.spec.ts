// Binary files in exports with the host's real git: a git binary patch of any size applies byte for
// byte with `git apply`; bytes staged into a branch go in only onto the contents the agent started
// from, and only at paths inside the repository (never `.git`, `..` or absolute).
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addedBinarySection, gitBlobId } from './git-binary.js';
import { checkTarget, commitPatch, type ByteChange } from './git-export.js';

const scratch = mkdtempSync(join(tmpdir(), 'warden-git-binary-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=Spec', '-c', 'user.email=spec@localhost', ...args], { cwd, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

function repo(name: string, files: Record<string, Buffer>): string {
  const dir = join(scratch, name);
  git(scratch, 'init', '--quiet', '--initial-branch=main', dir);
  for (const [path, bytes] of Object.entries(files)) writeFileSync(join(dir, path), bytes);
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '--allow-empty', '-m', 'start');
  return dir;
}

describe('git binary patches', () => {
  it('apply byte for byte with git apply, at every line length and size', () => {
    const dir = repo('apply', {});
    const sizes = [0, 1, 25, 26, 27, 51, 52, 53, 4096, 300_000];
    let patch = '';
    const made = new Map<string, Buffer>();
    for (const n of sizes) {
      const bytes = n === 300_000 ? Buffer.concat([randomBytes(1000), Buffer.alloc(n - 1000)]) : randomBytes(n);
      made.set(`f${n}.bin`, bytes);
      patch += addedBinarySection(`f${n}.bin`, '100644', bytes);
    }
    writeFileSync(join(scratch, 'bin.patch'), patch);
    git(dir, 'apply', '--index', join(scratch, 'bin.patch'));
    for (const [path, bytes] of made) {
      expect(readFileSync(join(dir, path)).equals(bytes), path).toBe(true);
      expect(git(dir, 'rev-parse', `:${path}`)).toBe(gitBlobId(bytes));
    }
    // The reverse hunk takes them out again.
    git(dir, 'apply', '-R', '--index', join(scratch, 'bin.patch'));
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('writes the empty literal as git does', () => {
    expect(addedBinarySection('e', '100644', Buffer.alloc(0))).toContain('literal 0\nHcmV?d00001\n');
  });
});

describe('bytes staged into a branch', () => {
  const before = Buffer.from([1, 2, 0, 3]);
  const after = Buffer.from([9, 0, 9]);
  const change = (over: Partial<ByteChange>): ByteChange => ({
    path: 'data.bin',
    change: 'modified',
    beforeSha256: sha256(before),
    bytes: after,
    mode: '100644',
    ...over,
  });
  const noBranch = (dir: string) => spawnSync('git', ['rev-parse', '--verify', '--quiet', 'refs/heads/out'], { cwd: dir }).status !== 0;

  it('goes onto the contents the agent started from', () => {
    const dir = repo('staged', { 'data.bin': before, 'gone.bin': before });
    const commit = commitPatch(checkTarget(dir, 'out'), 'out', '# nothing as text\n', 'm', [
      change({}),
      change({ path: 'gone.bin', change: 'deleted', bytes: null }),
    ]);
    const r = spawnSync('git', ['cat-file', 'blob', `${commit}:data.bin`], { cwd: dir });
    expect(r.stdout.equals(after)).toBe(true);
    expect(git(dir, 'ls-tree', '--name-only', commit)).toBe('data.bin');
  });

  it('refuses other contents, and paths outside the repository or in .git, and leaves no branch', () => {
    const dir = repo('refused', { 'data.bin': Buffer.from('someone else’s') });
    expect(() => commitPatch(checkTarget(dir, 'out'), 'out', '', 'm', [change({})])).toThrow(/not what the agent started from/);
    expect(noBranch(dir)).toBe(true);
    for (const path of ['.git/config', 'a/../../x', '/etc/passwd', 'sub/.GIT/hooks/pre-commit', 'a//b']) {
      expect(() => commitPatch(checkTarget(dir, 'out'), 'out', '', 'm', [change({ path })]), path).toThrow(/not a path an export writes/);
      expect(noBranch(dir)).toBe(true);
    }
    expect(git(dir, 'worktree', 'list').split('\n')).toHaveLength(1);
  });
});
