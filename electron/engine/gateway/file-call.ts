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
import type { AgentContext, CallHooks, SandboxCall } from './call-spec.js';
import { fileVerdict, pathAccess } from './path-policy.js';
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

/** A file, a symlink (not followed) or an empty directory. */
export function removeVerb(engine: WardenEngine, path: string): FileVerb<{ path: string }> {
  return { args: { path }, act: (info, comps, call) => engine.files.remove(info, comps, call), settle: () => undefined };
}

/** A file or symlink to a new path (its directory must exist); what was at the destination is replaced. */
export function moveVerb(engine: WardenEngine, path: string, to: string): FileVerb<FileMoved> {
  return {
    args: { path, to },
    target: to,
    act: (info, comps, call) => engine.files.move(info, comps, workspaceComponents(to), call),
    settle: () => undefined,
  };
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
