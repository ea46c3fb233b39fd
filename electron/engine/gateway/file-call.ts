// The file verbs' part of a call (read, write, list, mkdir, remove, move): one path under /workspace, its shape checked
// (podman/workspace-path.ts) and then the policy's path rules (path-policy.ts) as the verdict; the
// engine does the I/O and records it, named after the call; the result fills the call's digests and sizes.
import { createHash } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import type { DirMade, FileList, FileMoved, FileWritten } from '../../../shared/types/api.js';
import type { ApprovalEffect } from '../../../shared/types/approval-effect.js';
import type { ToolCallInfo } from '../../../shared/types/run.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { CallRef, WardenEngine } from '../engine.js';
import { workspaceComponents, workspacePath } from '../podman/workspace-path.js';

/** A listing more than one level down: each entry's path is relative to the listed directory. */
export interface TreeList {
  path: string;
  entries: TreeEntry[];
}
import type { AgentContext, CallHooks, SandboxCall } from './call-spec.js';
import { fileVerdict, pathAccess } from './path-policy.js';
import { GatewayDenial } from './denial.js';
import { MAX_TREE_DEPTH, type TreeEntry } from '../podman/file-tree.js';
import type { EffectivePolicy } from './policy-load.js';
import type { Run } from './runs.js';
import { currentFile, stillAsShown, writeEffect } from './write-effect.js';

export type FileOp = 'read' | 'write' | 'list' | 'mkdir' | 'remove' | 'move';

/** Ops that change the workspace: each path they touch must be writable for the agent. */
const WRITES: ReadonlySet<FileOp> = new Set<FileOp>(['write', 'mkdir', 'remove', 'move']);

/** What differs between the file verbs: the call's args, the engine's operation, and what its result puts on the call. */
export interface FileVerb<T> {
  args: Record<string, unknown>;
  act: (info: SandboxInfo, comps: string[], call: CallRef, policy: EffectivePolicy) => Promise<T>;
  settle: (call: ToolCallInfo, value: T) => void;
  /** A second path the op writes (a move's destination), checked like the first. */
  target?: string;
  /** What the op would change, for a person asked to approve it (write-effect.ts). */
  preview?: (info: SandboxInfo, comps: string[]) => Promise<ApprovalEffect>;
}

/** The run's args for a file call (a write's digest is the call's, not the run's). */
export function fileRunArgs(op: FileOp, path: string, verb: { args: Record<string, unknown> }): Record<string, unknown> {
  if (op === 'move') return { path, to: verb.args.to };
  if (op === 'list' && verb.args.depth !== undefined) return { path, depth: verb.args.depth };
  return op === 'write' ? { path, bytes: verb.args.bytes } : { path };
}

export function fileSpec<T>(op: FileOp, ctx: AgentContext, path: string, hooks: CallHooks | undefined, verb: FileVerb<T>) {
  let comps: string[] = [];
  return (info: SandboxInfo, run: Run, policy: EffectivePolicy): SandboxCall<T> => ({
    args: verb.args,
    hooks,
    verdict: () => {
      comps = workspaceComponents(path);
      if (op === 'write' && comps.length === 0) throw new WardenError('E_BAD_INPUT', '/workspace is a directory; name a file in it');
      if ((op === 'remove' || op === 'move') && comps.length === 0)
        throw new WardenError('E_BAD_INPUT', `/workspace itself cannot be ${op}d`);
      if (op === 'mkdir') refuseTooDeep(comps, comps.length, 'the directory');
      if (op === 'write') refuseTooDeep(comps, comps.length - 1, "the file's directory");
      if (verb.target !== undefined) {
        const to = workspaceComponents(verb.target);
        if (to.length === 0) throw new WardenError('E_BAD_INPUT', '/workspace is a directory; name the destination in it');
        fileVerdict(ctx, policy, workspacePath(to), true, op);
      }
      const verdict = fileVerdict(ctx, policy, workspacePath(comps), WRITES.has(op), op);
      const preview = verb.preview;
      return verdict.action === 'ask' && preview ? { ...verdict, effect: () => preview(info, comps) } : verdict;
    },
    body: (call) => verb.act(info, comps, { runId: run.id, callId: call.id }, policy),
    settle: (call, value) => {
      verb.settle(call, value);
      return true;
    },
  });
}

export function readVerb(engine: WardenEngine, path: string, maxBytes: number): FileVerb<Buffer> {
  return {
    args: { path },
    act: (info, comps, call) => engine.files.readFile(info, comps, maxBytes, call),
    settle: (call, data) => {
      call.digests = { content: sha256(data) };
      call.bytes = { content: data.length };
    },
  };
}

/**
 * A write asked about shows its diff first (preview); approved, it goes ahead only over the file that
 * diff was made against. `maxRead` bounds how much of the file there now is read for the diff.
 */
export function writeVerb(engine: WardenEngine, path: string, data: Buffer, maxRead: number): FileVerb<FileWritten> {
  let shown: ApprovalEffect | null = null;
  const now = (info: SandboxInfo, comps: string[]) => currentFile(engine.podman.connection, info.id, comps, maxRead);
  return {
    args: { path, bytes: data.length, sha256: sha256(data) },
    preview: async (info, comps) => (shown = writeEffect(comps, await now(info, comps), data)),
    act: async (info, comps, call) => {
      if (shown) stillAsShown(shown, await now(info, comps));
      return engine.files.writeFile(info, comps, data, call);
    },
    settle: (call, w) => {
      call.digests = { ...call.digests, content: w.sha256 };
      call.bytes = { content: w.bytes };
    },
  };
}

/** Entries the path rules hide from agents are left out of the list (and of its record). */
export function listVerb(engine: WardenEngine, path: string): FileVerb<FileList> {
  return {
    args: { path },
    act: (info, comps, call, policy) => engine.files.listDir(info, comps, (p) => pathAccess(policy.paths, p).access !== 'hidden', call),
    settle: (call, list) => {
      call.bytes = { entries: list.entries.length };
    },
  };
}

/** A directory and its missing parents; `created` is false when it was already there. */
export function mkdirVerb(engine: WardenEngine, path: string): FileVerb<DirMade> {
  return {
    args: { path },
    act: (info, comps, call) => engine.files.makeDir(info, comps, call),
    settle: () => undefined,
  };
}

/** Entries `depth` levels down (E2B's list with depth > 1); hidden ones, and all under them, left out. */
export function treeVerb(engine: WardenEngine, path: string, depth: number): FileVerb<TreeList> {
  return {
    args: { path, depth },
    act: (info, comps, call, policy) =>
      engine.files.listTree(info, comps, depth, (p) => pathAccess(policy.paths, p).access !== 'hidden', call),
    settle: (call, list) => {
      call.bytes = { entries: list.entries.length };
    },
  };
}

/** The helper's refusals that a tree operation answers instead (file-helper.ts words them). */
const NOT_EMPTY = / is a directory that is not empty;/;
const A_DIRECTORY = / is a directory; the file API moves files and symlinks$/;
const refusedFor = (err: unknown, words: RegExp) => err instanceof WardenError && words.test(err.message);

/**
 * An agent may change a tree only where it may change every path in it: any path under it that the
 * policy hides or keeps read-only refuses the whole call (a hidden one is not named). `at` maps a
 * path in the tree (relative) to each full path the call would change.
 */
function treeWritable(ctx: AgentContext, policy: EffectivePolicy, tree: TreeEntry[], at: (rel: string) => string[], what: string): void {
  if (ctx.trusted) return;
  for (const full of tree.flatMap((e) => at(e.path))) {
    const access = pathAccess(policy.paths, full);
    if (access.access === 'hidden') throw new GatewayDenial('path', `${what} would change paths hidden from agents by policy`);
    if (access.access === 'read-only')
      throw new GatewayDenial('path', `${what} would change ${full}, read-only for agents by policy (${access.rule})`);
  }
}

/** A file, a symlink (not followed) or an empty directory; with `recursive`, a directory and all in it (E2B's remove). */
export function removeVerb(engine: WardenEngine, ctx: AgentContext, path: string, recursive = false): FileVerb<{ path: string }> {
  return {
    args: recursive ? { path, recursive } : { path },
    act: async (info, comps, call, policy) => {
      try {
        return await engine.files.remove(info, comps, call);
      } catch (err) {
        if (!recursive || !refusedFor(err, NOT_EMPTY)) throw err;
      }
      const root = workspacePath(comps);
      treeWritable(ctx, policy, await engine.files.walk(info, comps), (rel) => [`${root}/${rel}`], `removing ${root}`);
      return engine.files.removeTree(info, comps, call);
    },
    settle: () => undefined,
  };
}

/** A file or symlink (with `dirs`, a directory and all in it) to a new path (its directory must exist); a file at the destination is replaced. */
export function moveVerb(engine: WardenEngine, ctx: AgentContext, path: string, to: string, dirs = false): FileVerb<FileMoved> {
  return {
    args: dirs ? { path, to, dirs } : { path, to },
    target: to,
    act: async (info, comps, call, policy) => {
      const dest = workspaceComponents(to);
      try {
        return await engine.files.move(info, comps, dest, call);
      } catch (err) {
        if (!dirs || !refusedFor(err, A_DIRECTORY)) throw err;
      }
      const [from, into] = [workspacePath(comps), workspacePath(dest)];
      if (into === from || into.startsWith(`${from}/`)) throw new WardenError('E_BAD_INPUT', `${from} cannot be moved into itself`);
      const at = (rel: string) => [`${from}/${rel}`, `${into}/${rel}`];
      const tree = await engine.files.walk(info, comps);
      const below = Math.max(0, ...tree.filter((e) => e.type === 'dir').map((e) => e.path.split('/').length));
      refuseTooDeep(dest, dest.length + below, `moved there, a directory of ${from}`);
      treeWritable(ctx, policy, tree, at, `moving ${from}`);
      return engine.files.move(info, comps, dest, call, true);
    },
    settle: () => undefined,
  };
}

/**
 * The file API makes no directory deeper below /workspace than its walks go (MAX_TREE_DEPTH), so
 * every tree it makes it can also list whole and remove (a removal walks the tree first, and refuses
 * one deeper than that). A command in the sandbox may nest deeper; the file API then refuses to remove
 * that tree, whole (file-tree.ts).
 */
function refuseTooDeep(comps: string[], levels: number, what: string): void {
  if (levels <= MAX_TREE_DEPTH) return;
  const path = workspacePath(comps);
  throw new WardenError(
    'E_BAD_INPUT',
    `${path.length > 120 ? `${path.slice(0, 120)}…` : path}: ${what} would be ${levels} levels below /workspace, deeper than the ${MAX_TREE_DEPTH} levels the file API makes directories`,
    `keep directories at most ${MAX_TREE_DEPTH} levels below /workspace: the file API lists and removes trees that deep, no deeper`,
  );
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
