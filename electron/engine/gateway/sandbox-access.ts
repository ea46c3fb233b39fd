// Which sandboxes an agent may see and act on. With policy access "own" an agent acts only on the
// sandboxes it created (they carry AGENT_LABEL); legacy sandboxes (no home label, maybe another
// home's) are the user's only. Whatever the reason, a sandbox an agent may not touch is answered
// as a missing one: a 403 would tell an agent which names other agents' sandboxes have.
import { WardenError } from '../../../shared/errors.js';
import type { Policy } from '../../../shared/types/policy.js';
import type { ToolName } from '../../../shared/types/run.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { WardenEngine } from '../engine.js';
import type { ContextAuditSink } from './audit-context.js';
import type { AgentContext } from './call-spec.js';
import { settlingOf } from '../podman/settling.js';

/** Label on sandboxes an agent created: with access "own", agents act only on their own. */
export const AGENT_LABEL = 'warden-gateway.agent';
/** Resolved sandboxes are kept this long: an agent's burst of calls inspects its sandbox once. */
const RESOLVE_CACHE_MS = 2000;

export class SandboxAccess {
  private readonly resolved = new Map<string, { info: SandboxInfo; until: number }>();
  private readonly stopEvents: () => void;

  constructor(
    private readonly engine: WardenEngine,
    private readonly audit: ContextAuditSink,
    private readonly policy: () => Policy,
  ) {
    // A sandbox removed, paused or resumed by any door (the UI too) is seen as it is at the next call.
    this.stopEvents = engine.events.on('sandbox.event', (e) => {
      if (e.kind === 'remove' || e.kind === 'pause' || e.kind === 'unpause') this.forget();
    });
  }

  close(): void {
    this.stopEvents();
  }

  /** After a lifecycle change: the next call sees the sandbox as it is now. */
  forget(): void {
    this.resolved.clear();
  }

  /** The sandbox `ref` names, if this caller may act on it; a refusal is recorded as a decision. */
  async resolve(ctx: AgentContext, ref: string, tool: ToolName): Promise<SandboxInfo> {
    const hit = this.resolved.get(ref);
    let info: SandboxInfo;
    if (hit && hit.until > Date.now()) info = hit.info;
    else {
      try {
        info = await this.engine.resolveSandbox(ref);
      } catch (err) {
        // One answer for every sandbox an agent may not see, so its name says nothing.
        if (!ctx.trusted && err instanceof WardenError && err.code === 'E_NOT_FOUND') throw notFound(ref);
        throw err;
      }
      this.resolved.set(ref, { info, until: Date.now() + RESOLVE_CACHE_MS });
      if (this.resolved.size > 1000) this.resolved.clear();
    }
    if (!this.mayAccess(ctx, info)) {
      // Recorded as a decision (the agent asked for a sandbox it may not touch), but answered as a missing one.
      const reason = `sandbox ${ref} was not created by agent ${ctx.agent} (policy access: own)`;
      await this.audit
        .appendBatchAsync([
          {
            actor: ctx.agent,
            sandboxId: info.id,
            kind: 'policy.denied',
            payload: { tool, args: { ref }, decision: { action: 'deny', source: 'access', reason, denyReason: 'policy' } },
          },
        ])
        .catch((err: Error) =>
          process.stderr.write(`warden: WARNING: the ledger did not take a policy.denied entry (${reason}): ${err.message}\n`),
        );
      throw notFound(ref);
    }
    // Every agent call comes through here: none reaches a sandbox while a start of it settles (settling.ts).
    await settlingOf(this.engine.podman.connection).settled(info.id);
    return info;
  }

  mayAccess(ctx: AgentContext, info: SandboxInfo): boolean {
    return ctx.trusted === true || (!info.legacy && (this.policy().access === 'all' || info.labels[AGENT_LABEL] === ctx.agent));
  }

  /** The sandboxes this caller may see. */
  async list(ctx: AgentContext): Promise<SandboxInfo[]> {
    return (await this.engine.listSandboxes()).filter((s) => this.mayAccess(ctx, s));
  }

  /** How many sandboxes the agent has created (and not destroyed), for its create limit. */
  async countOwn(agent: string): Promise<number> {
    return (await this.engine.listSandboxes()).filter((s) => !s.legacy && s.labels[AGENT_LABEL] === agent).length;
  }
}

/** Who made a sandbox, for policy overrides: they loosen only for sandboxes the user made (an agent picks its sandboxes' names). */
export function madeBy(info: SandboxInfo): 'user' | 'agent' {
  return !info.legacy && info.labels[AGENT_LABEL] === undefined ? 'user' : 'agent';
}

/** What an agent hears about a sandbox that is missing, not Warden's, or another agent's: the same. */
function notFound(ref: string): WardenError {
  return new WardenError('E_NOT_FOUND', `no sandbox named ${ref}`, 'list your sandboxes with GET /v1/sandboxes');
}
