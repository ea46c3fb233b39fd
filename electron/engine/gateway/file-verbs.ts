// The file verbs for agents: one path under /workspace each (file-call.ts says how each is checked,
// decided and recorded), run through the gateway's pipeline like every verb on a sandbox. Apart from
// gateway.ts so that each new door's file operations (the E2B door added mkdir, remove and move)
// land here and not in the gateway's core.
import { WardenError } from '../../../shared/errors.js';
import type { DirMade, FileList, FileMoved, FileWritten } from '../../../shared/types/api.js';
import type { Policy } from '../../../shared/types/policy.js';
import type { WardenEngine } from '../engine.js';
import type { AgentContext, CallHooks, OnSandbox } from './call-spec.js';
import { fileRunArgs, fileSpec, listVerb, mkdirVerb, moveVerb, readVerb, removeVerb, writeVerb } from './file-call.js';
import type { FileOp, FileVerb } from './file-call.js';

export class FileVerbs {
  constructor(
    private readonly engine: WardenEngine,
    private readonly policy: () => Policy,
    private readonly onSandbox: OnSandbox,
  ) {}

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

  remove(ctx: AgentContext, ref: string, path: string, hooks?: CallHooks): Promise<{ path: string }> {
    return this.call('remove', ctx, ref, path, hooks, removeVerb(this.engine, path));
  }

  move(ctx: AgentContext, ref: string, path: string, to: string, hooks?: CallHooks): Promise<FileMoved> {
    return this.call('move', ctx, ref, path, hooks, moveVerb(this.engine, path, to));
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
