// A run's patch as a commit on a new branch of a repository on the host, with the host's `git`: no
// credential ever enters the sandbox. The user's checked-out working tree is never touched: the patch
// is applied in a temporary worktree, and the branch is made only once the commit exists. A dirty
// repository or a branch that already exists is refused rather than mixed with the agent's changes.
// Files only their bytes can carry (a binary changed or deleted) go into the commit's index with git
// itself (hash-object, update-index: git checks every path), once HEAD is seen to hold what the
// agent started from.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { WardenError } from '../../shared/errors.js';

/** The patch's content never runs anything: no hooks, no user's templates on this commit. */
const SAFE_CONFIG = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgSign=false'];

function git(cwd: string, args: string[], input?: string): { ok: boolean; out: string; err: string } {
  const r = spawnSync('git', [...SAFE_CONFIG, ...args], {
    cwd,
    encoding: 'utf8',
    input,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
  });
  if (r.error) throw new WardenError('E_NOT_FOUND', `cannot run git: ${r.error.message}`, 'install git on this machine');
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

/** git with bytes in and out (blob contents), not text. */
function gitBytes(cwd: string, args: string[], input?: Buffer): { ok: boolean; out: Buffer; err: string } {
  const r = spawnSync('git', [...SAFE_CONFIG, ...args], {
    cwd,
    input,
    maxBuffer: 1024 ** 3,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
  });
  if (r.error) throw new WardenError('E_NOT_FOUND', `cannot run git: ${r.error.message}`, 'install git on this machine');
  return { ok: r.status === 0, out: r.stdout, err: r.stderr.toString('utf8').trim() };
}

/** A changed or deleted file the patch could not carry: its new bytes (null: deleted) and the digest it had before. */
export interface ByteChange {
  path: string;
  change: 'modified' | 'deleted';
  beforeSha256: string;
  bytes: Buffer | null;
  /** git's file mode: 100644 or 100755. */
  mode: string;
}

/** A path of the sandbox's, as a path in the repository: relative, no empty, `.`, `..` or `.git` part. */
function repoPath(path: string): string {
  const parts = path.split('/');
  if (path.startsWith('/') || parts.some((p) => p === '' || p === '.' || p === '..' || p.toLowerCase() === '.git'))
    throw new WardenError('E_BAD_INPUT', `${JSON.stringify(path)} is not a path an export writes`);
  return path;
}

function stageBytes(tree: string, head: string, files: ByteChange[]): void {
  for (const f of files) {
    const path = repoPath(f.path);
    const old = gitBytes(tree, ['cat-file', 'blob', `${head}:${path}`]);
    if (!old.ok || createHash('sha256').update(old.out).digest('hex') !== f.beforeSha256) {
      throw new WardenError(
        'E_CONFLICT',
        `the run's change to ${JSON.stringify(path)} does not apply on ${head.slice(0, 12)}: the file there is not what the agent started from`,
        'export onto the commit the agent started from',
      );
    }
    if (f.bytes === null) {
      must(tree, ['update-index', '--force-remove', '--', path], `cannot remove ${path}`);
      continue;
    }
    const blob = gitBytes(tree, ['hash-object', '-w', '--stdin'], f.bytes);
    if (!blob.ok) throw new WardenError('E_CONFLICT', `cannot store ${path}: ${blob.err}`);
    must(tree, ['update-index', '--cacheinfo', `${f.mode},${blob.out.toString('utf8').trim()},${path}`], `cannot stage ${path}`);
  }
}

function must(cwd: string, args: string[], what: string): string {
  const r = git(cwd, args);
  if (!r.ok) throw new WardenError('E_CONFLICT', `${what}: ${r.err || `git ${args[0]} failed`}`);
  return r.out;
}

/** Checks the target before anything is written; returns the repository's top and its HEAD commit. */
export function checkTarget(dir: string, branch: string): { top: string; head: string } {
  const top = git(resolve(dir), ['rev-parse', '--show-toplevel']);
  if (!top.ok)
    throw new WardenError('E_NOT_FOUND', `${dir} is not a git repository`, 'pass --repo DIR of a git checkout (git init makes one)');
  if (!git(top.out, ['check-ref-format', '--branch', branch]).ok)
    throw new WardenError('E_BAD_INPUT', `${JSON.stringify(branch)} is not a valid branch name`, 'see `git check-ref-format --help`');
  const head = git(top.out, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (!head.ok) throw new WardenError('E_CONFLICT', `${top.out} has no commit yet`, 'commit the code the agent started from, then export');
  if (git(top.out, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]).ok)
    throw new WardenError(
      'E_CONFLICT',
      `branch ${branch} already exists in ${top.out}`,
      'choose a new --branch name; an export never adds to a branch',
    );
  const dirty = must(top.out, ['status', '--porcelain', '--untracked-files=normal'], 'git status');
  if (dirty)
    throw new WardenError(
      'E_CONFLICT',
      `${top.out} has uncommitted changes (${dirty.split('\n').length} path(s)); refusing to mix them with the run's`,
      'commit or stash them first (git status shows them)',
    );
  return { top: top.out, head: head.out };
}

/**
 * Applies `patch` on HEAD in a temporary worktree (and stages `bytes`), commits it, then makes
 * `branch` point there. The commit id.
 */
export function commitPatch(
  target: { top: string; head: string },
  branch: string,
  patch: string,
  message: string,
  bytes: ByteChange[] = [],
): string {
  const scratch = mkdtempSync(join(tmpdir(), 'warden-export-'));
  const tree = join(scratch, 'tree');
  try {
    must(target.top, ['worktree', 'add', '--detach', '--quiet', tree, target.head], 'cannot make a temporary worktree');
    const file = join(scratch, 'run.patch');
    writeFileSync(file, patch);
    // A patch of header comments alone (every change carried as bytes) is no patch to git apply.
    if (/^diff --git /m.test(patch))
      must(tree, ['apply', '--index', '--whitespace=nowarn', file], `the run's patch does not apply on ${target.head.slice(0, 12)}`);
    stageBytes(tree, target.head, bytes);
    // A commit needs an author: the user's own identity when git has one, Warden's otherwise.
    const identity = git(tree, ['config', 'user.email']).ok ? [] : ['-c', 'user.name=Warden', '-c', 'user.email=warden@localhost'];
    writeFileSync(join(scratch, 'message'), message);
    must(tree, [...identity, 'commit', '--quiet', '--no-verify', '--allow-empty', '-F', join(scratch, 'message')], 'git commit');
    const commit = must(tree, ['rev-parse', 'HEAD'], 'git rev-parse');
    must(target.top, ['branch', branch, commit], `cannot create branch ${branch}`);
    return commit;
  } finally {
    git(target.top, ['worktree', 'remove', '--force', tree]);
    rmSync(scratch, { recursive: true, force: true });
    git(target.top, ['worktree', 'prune']);
  }
}
