// Snapshots for agents: snapshot, list, remove, reset and fork, each on a sandbox the agent may act on
// (with access "own", only its own; any other is "not found" as everywhere else), filed into its run
// and recorded like the lifecycle verbs. A fork is a new sandbox of the agent's, so it counts against
// create.maxSandboxes under the agent's create lock, as a create does.
import { WardenError } from '../../../shared/errors.js';
import type { ToolName } from '../../../shared/types/run.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { SnapshotInfo } from '../../../shared/types/snapshot.js';
import type { Policy } from '../../../shared/types/policy.js';
import type { WardenEngine } from '../engine.js';
import type { AgentLimits } from './agent-limits.js';
import type { AgentContext, OnSandbox, PolicyVerdict } from './call-spec.js';
import { GatewayDenial } from './denial.js';
import type { RunStore } from './runs.js';
import { AGENT_LABEL, type SandboxAccess } from './sandbox-access.js';
import { infoOf, ownerOfLabels, type SnapshotManifest, type SnapshotScope } from '../snapshot/snapshot-store.js';
import { createVerdict } from './create-policy.js';

export interface SnapshotVerbDeps {
  engine: WardenEngine;
  runs: RunStore;
  access: SandboxAccess;
  limits: AgentLimits;
  policy: () => Policy;
  onSandbox: OnSandbox;
  /** The sandbox, if the caller may act on it (no run: a read). */
  sandbox: (ctx: AgentContext, ref: string, tool: ToolName) => Promise<SandboxInfo>;
}

/** Snapshots one agent may keep, over all its sandboxes (gone ones too). */
export const MAX_AGENT_SNAPSHOTS = 16;

const allowed = (tool: ToolName, summary: string): PolicyVerdict => ({
  action: 'allow',
  source: 'lifecycle',
  reason: `${tool} of a sandbox the agent may act on`,
  scope: tool,
  summary,
});

export class SnapshotVerbs {
  constructor(private readonly d: SnapshotVerbDeps) {}

  private async call<T>(
    ctx: AgentContext,
    ref: string,
    tool: ToolName,
    args: Record<string, unknown>,
    body: (info: SandboxInfo) => Promise<T>,
    check?: (info: SandboxInfo) => void,
  ) {
    return this.d.onSandbox<T>(ctx, ref, tool, { ref, ...args }, (info) => ({
      args: { ref, sandboxId: info.id, ...args },
      verdict: () => {
        check?.(info);
        return allowed(tool, `${tool} ${info.name} ${Object.values(args).join(' ')}`.trim());
      },
      body: () => body(info),
      settle: () => true,
    }));
  }

  /**
   * Snapshots are kept by sandbox name and a name is free again once its sandbox is gone: with access
   * "own", an agent's snapshots are those of sandboxes it owned (its own folder of the name's, where
   * its tags are unique), not whatever a name it now holds once had; another's is "not found", as its
   * sandbox would be. A caller that sees every owner's has the user's view (SnapshotScope).
   */
  private scope(ctx: AgentContext, info: SandboxInfo): SnapshotScope {
    return this.seesAll(ctx) ? { prefer: ownerOfLabels(info.labels) } : { owner: ctx.agent };
  }

  private seesAll(ctx: AgentContext): boolean {
    return ctx.trusted === true || this.d.policy().access === 'all';
  }

  private owns(ctx: AgentContext, labels: Record<string, string> | undefined): boolean {
    return this.seesAll(ctx) || labels?.[AGENT_LABEL] === ctx.agent;
  }

  /**
   * Each snapshot costs the host its archive and layer (up to twice the sandbox's disk), and they
   * outlive their sandbox: an agent keeps at most MAX_AGENT_SNAPSHOTS, over all its sandboxes' names,
   * taken one at a time under its create lock so two at once cannot both be the last.
   */
  async snapshot(ctx: AgentContext, ref: string, tag: string | undefined): Promise<SnapshotInfo> {
    const take = async () => {
      const { value } = await this.call(
        ctx,
        ref,
        'sandbox.snapshot',
        tag ? { tag } : {},
        (info) => this.d.engine.snapshots.snapshot(info.id, tag, ctx.agent),
        () => {
          const store = this.d.engine.snapshots.store;
          // Automatic ones (policy's) have their own bound (auto-snapshots.ts) and do not use up the agent's.
          const kept = store
            .names()
            .flatMap((n) => store.list(n).filter((m) => !m.automatic && m.spec.labels?.[AGENT_LABEL] === ctx.agent)).length;
          if (!ctx.trusted && kept >= MAX_AGENT_SNAPSHOTS) {
            throw new GatewayDenial(
              'create-limits',
              `agent ${ctx.agent} keeps ${kept} snapshots, the most an agent may`,
              'remove one it no longer needs first (DELETE /v1/sandboxes/{id}/snapshots/{tag})',
            );
          }
        },
      );
      return value;
    };
    return ctx.trusted ? take() : this.d.limits.underCreateLock(ctx.agent, take);
  }

  /**
   * The user may name a sandbox that is gone but left snapshots (they are kept by name): there is no
   * sandbox to file the call under, so the engine does it directly (and records it as ever). Agents
   * act only on sandboxes that are there.
   */
  private async gone(ctx: AgentContext, ref: string): Promise<boolean> {
    if (!ctx.trusted || !this.d.engine.snapshots.store.has(ref)) return false;
    return this.d.engine.resolveSandbox(ref).then(
      () => false,
      (err: unknown) => err instanceof WardenError && err.code === 'E_NOT_FOUND',
    );
  }

  async list(ctx: AgentContext, ref: string): Promise<SnapshotInfo[]> {
    if (await this.gone(ctx, ref)) return this.d.engine.snapshots.list(ref);
    const info = await this.d.sandbox(ctx, ref, 'sandbox.inspect');
    return this.d.engine.snapshots.store
      .list(info.name)
      .filter((m) => this.owns(ctx, m.spec.labels))
      .map(infoOf);
  }

  async remove(ctx: AgentContext, ref: string, tag: string): Promise<SnapshotInfo> {
    if (await this.gone(ctx, ref)) return this.d.engine.snapshots.remove(ref, tag);
    const { value } = await this.call(ctx, ref, 'snapshot.remove', { tag }, (info) =>
      this.d.engine.snapshots.remove(info.name, tag, undefined, this.scope(ctx, info)),
    );
    return value;
  }

  /** The sandbox comes back under the same name with a new id: the run follows it there. */
  async reset(ctx: AgentContext, ref: string, to: string): Promise<SandboxInfo> {
    if (await this.gone(ctx, ref)) return this.d.engine.snapshots.reset(ref, to);
    const { value, run } = await this.call(
      ctx,
      ref,
      'sandbox.reset',
      { to },
      (info) => this.d.engine.snapshots.reset(info.name, to, this.scope(ctx, info)),
      // The agent's own sandbox made again is its create: within its create limits as they are now (it replaces one: not counted).
      (info) => {
        if (!ctx.trusted && info.labels[AGENT_LABEL] === ctx.agent) this.createLimits(ctx, info, to, info.name, 0);
      },
    );
    this.d.access.forget();
    if (run.sandboxId !== value.id) this.d.runs.bind(run, { id: value.id, name: value.name });
    return value;
  }

  /**
   * A fork (or a reset of its own sandbox) is a create by the agent: the snapshot's spec (another's
   * sandbox's, with access "all", or one made under an older policy) must be within the agent's create
   * limits now, as its own create would be. A snapshot that is missing or not the agent's passes here
   * and is "not found" in the body.
   */
  private createLimits(ctx: AgentContext, info: SandboxInfo, from: string, name: string, owned: number): void {
    let manifest: SnapshotManifest | null = null;
    try {
      manifest = this.d.engine.snapshots.store.get(info.name, from, this.scope(ctx, info));
    } catch (err) {
      if (!(err instanceof WardenError && err.code === 'E_NOT_FOUND')) throw err;
    }
    if (!manifest) {
      if (owned >= this.d.policy().create.maxSandboxes) throw GatewayDenial.tooManySandboxes(ctx.agent, owned);
      return;
    }
    const { workspace: _hostDir, labels: _labels, ...spec } = manifest.spec;
    createVerdict(this.d.policy(), this.d.engine.defaultImage, { ...spec, name }, ctx, owned);
  }

  async fork(ctx: AgentContext, ref: string, from: string, name: string): Promise<SandboxInfo> {
    const fork = async () => {
      const owned = ctx.trusted ? 0 : await this.d.access.countOwn(ctx.agent);
      const { value } = await this.d.onSandbox<SandboxInfo>(ctx, ref, 'sandbox.fork', { ref, from, name }, (info) => ({
        args: { ref, sandboxId: info.id, from, name },
        verdict: () => {
          if (!ctx.trusted) this.createLimits(ctx, info, from, name, owned);
          return allowed('sandbox.fork', `fork ${info.name} from ${from} as ${name}`);
        },
        // The agent's, whoever owned the original: counted, and never taken for one the user made.
        body: () =>
          this.d.engine.snapshots.fork(info.name, from, name, ctx.trusted ? {} : { [AGENT_LABEL]: ctx.agent }, this.scope(ctx, info)),
        settle: (call, forked) => {
          call.args = { ...call.args, forkId: forked.id };
          return true;
        },
      }));
      this.d.access.forget();
      return value;
    };
    return ctx.trusted ? fork() : this.d.limits.underCreateLock(ctx.agent, fork);
  }
}
