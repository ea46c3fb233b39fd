// The file verbs for agents: one path under /workspace each (file-call.ts says how each is checked,
// decided and recorded), run through the gateway's pipeline like every verb on a sandbox. Apart from
// gateway.ts so that each new door's file operations (the E2B door added mkdir, remove and move)
// land here and not in the gateway's core.
import { WardenError } from '../../../shared/errors.js';
import type { DirMade, FileList, FileMoved, FileWritten } from '../../../shared/types/api.js';
import type { Policy } from '../../../shared/types/policy.js';
import type { WardenEngine } from '../engine.js';
import type { AgentContext, CallHooks, OnSandbox } from './call-spec.js';
import { fileRunArgs, fileSpec, listVerb, mkdirVerb, moveVerb, readVerb, removeVerb, treeVerb, writeVerb } from './file-call.js';
import type { FileOp, FileVerb, TreeList } from './file-call.js';
import { MAX_TREE_DEPTH, type TreeEntry } from '../podman/file-tree.js';
import { workspaceComponents, workspacePath } from '../podman/workspace-path.js';
import type { ToolName } from '../../../shared/types/run.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { pathAccess } from './path-policy.js';
import { effectivePolicy } from './policy-load.js';
import { madeBy } from './sandbox-access.js';

export class FileVerbs {
  constructor(
    private readonly engine: WardenEngine,
    private readonly policy: () => Policy,
    private readonly onSandbox: OnSandbox,
    /** The sandbox, if the caller may act on it now (access, attestation, not paused); no run, no record. */
    private readonly sandbox: (ctx: AgentContext, ref: string, tool: ToolName) => Promise<SandboxInfo>,
  ) {}

  /**
   * A watch's later looks at a tree whose first look was a `tree` call (E2B's watchDir polls): the
   * sandbox checked each time as for a call, hidden paths left out, but not a call of its own, so
   * a watch does not fill the run and the ledger with one listing a second.
   */
  async look(ctx: AgentContext, ref: string, path: string, depth: number): Promise<TreeEntry[]> {
    const info = await this.sandbox(ctx, ref, 'file.list');
    const comps = workspaceComponents(path);
    const root = workspacePath(comps);
    const rules = effectivePolicy(this.policy(), info.name, madeBy(info)).paths;
    const entries = await this.engine.files.walk(info, comps, depth);
    return entries.filter((e) => pathAccess(rules, `${root}/${e.path}`).access !== 'hidden');
  }

  read(ctx: AgentContext, ref: string, path: string, hooks?: CallHooks): Promise<Buffer> {
    return this.call('read', ctx, ref, path, hooks, readVerb(this.engine, path, this.policy().files.maxReadBytes));
  }

  write(ctx: AgentContext, ref: string, path: string, data: Buffer, hooks?: CallHooks): Promise<FileWritten> {
    const max = this.policy().files.maxWriteBytes;
    if (data.length > max)
      throw new WardenError('E_TOO_LARGE', `the file is ${data.length} bytes, more than the ${max} the file API writes`);
    return this.call('write', ctx, ref, path, hooks, writeVerb(this.engine, path, data, this.policy().files.maxReadBytes));
  }

  list(ctx: AgentContext, ref: string, path = '/workspace', hooks?: CallHooks): Promise<FileList> {
    return this.call('list', ctx, ref, path, hooks, listVerb(this.engine, path));
  }

  makeDir(ctx: AgentContext, ref: string, path: string, hooks?: CallHooks): Promise<DirMade> {
    return this.call('mkdir', ctx, ref, path, hooks, mkdirVerb(this.engine, path));
  }

  /** `depth` levels down (1 is `list`), at most MAX_TREE_DEPTH. */
  tree(ctx: AgentContext, ref: string, path: string, depth: number, hooks?: CallHooks): Promise<TreeList> {
    if (!Number.isInteger(depth) || depth < 1 || depth > MAX_TREE_DEPTH)
      throw new WardenError('E_BAD_INPUT', `depth ${depth} is not one Warden lists`, `ask for 1 to ${MAX_TREE_DEPTH} levels`);
    return this.call('list', ctx, ref, path, hooks, treeVerb(this.engine, path, depth));
  }

  /** `recursive`: a directory with all in it too, when policy lets the agent change every path in it. */
  remove(ctx: AgentContext, ref: string, path: string, hooks?: CallHooks, opts: { recursive?: boolean } = {}): Promise<{ path: string }> {
    return this.call('remove', ctx, ref, path, hooks, removeVerb(this.engine, ctx, path, opts.recursive));
  }

  /** `dirs`: a directory with all in it too, as for a recursive remove. */
  move(ctx: AgentContext, ref: string, path: string, to: string, hooks?: CallHooks, opts: { dirs?: boolean } = {}): Promise<FileMoved> {
    return this.call('move', ctx, ref, path, hooks, moveVerb(this.engine, ctx, path, to, opts.dirs));
  }

  private async call<T>(
    op: FileOp,
    ctx: AgentContext,
    ref: string,
    path: string,
    hooks: CallHooks | undefined,
    verb: FileVerb<T>,
  ): Promise<T> {
    return (await this.onSandbox(ctx, ref, `file.${op}`, fileRunArgs(op, path, verb), fileSpec(op, ctx, path, hooks, verb))).value;
  }
}
