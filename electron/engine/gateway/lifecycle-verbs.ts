// An agent's sandbox lifecycle verbs after create: start, stop and destroy, a new TTL, pause and
// resume, each on a sandbox the agent may act on (another's is "not found", as everywhere), filed
// into its run and recorded. A TTL is a create limit: an agent may set at most
// policy.create.maxTtlSeconds from now and may not take the TTL away (the user may). Calls into a
// paused sandbox are refused here with a clear error, never left waiting on a frozen process.
import { WardenError } from '../../../shared/errors.js';
import type { Policy } from '../../../shared/types/policy.js';
import type { ToolName } from '../../../shared/types/run.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { WardenEngine } from '../engine.js';
import type { AgentContext, OnSandbox, PolicyVerdict } from './call-spec.js';
import { GatewayDenial } from './denial.js';
import { INSIDE_TOOLS } from './inside-tools.js';

export interface LifecycleVerbDeps {
  engine: WardenEngine;
  policy: () => Policy;
  onSandbox: OnSandbox;
  /** After a change: the next call sees the sandbox as it is now. */
  forget: () => void;
  /** After a destroy: the sandbox's runs end with it. */
  destroyed: (sandboxId: string) => void;
}

/** The verbs on the sandbox itself that need no more than access to it. */
type PlainLifecycleTool = 'sandbox.destroy' | 'sandbox.start' | 'sandbox.stop';

/** How a new TTL relates to the one there: `set` replaces it (E2B setTimeout), `extend` only ever moves it later (E2B connect). */
export type TtlMode = 'set' | 'extend';

/** The refusal of a call into a paused sandbox (its processes are frozen: the call could only hang). */
export function pausedRefusal(tool: ToolName, info: SandboxInfo): WardenError | null {
  if (info.state !== 'paused' || !INSIDE_TOOLS.has(tool)) return null;
  return new WardenError(
    'E_CONFLICT',
    `sandbox ${info.name} is paused`,
    'resume it first (E2B: Sandbox.connect(id); Warden: POST /v1/sandboxes/{id}/resume)',
  );
}

const allowed = (tool: ToolName, reason: string, summary: string): PolicyVerdict => ({
  action: 'allow',
  source: 'lifecycle',
  reason,
  scope: tool,
  summary,
});

export class LifecycleVerbs {
  constructor(private readonly d: LifecycleVerbDeps) {}

  /** Starts a sandbox the agent may act on (its runner comes back with it). */
  start(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    return this.plain(ctx, ref, 'sandbox.start') as Promise<SandboxInfo>;
  }

  stop(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    return this.plain(ctx, ref, 'sandbox.stop') as Promise<SandboxInfo>;
  }

  /** Destroys a sandbox the agent may act on; its runs end with it. */
  destroy(ctx: AgentContext, ref: string): Promise<{ id: string; name: string }> {
    return this.plain(ctx, ref, 'sandbox.destroy') as Promise<{ id: string; name: string }>;
  }

  /** Start, stop or destroy: allowed on any sandbox the agent may act on (access was checked on resolve), and recorded. */
  private async plain(ctx: AgentContext, ref: string, tool: PlainLifecycleTool): Promise<SandboxInfo | { id: string; name: string }> {
    const { value, info } = await this.d.onSandbox<SandboxInfo | { id: string; name: string }>(ctx, ref, tool, { ref }, (info) => ({
      args: { ref, sandboxId: info.id },
      verdict: () => allowed(tool, `${tool} of the agent's own sandbox`, `${tool} ${info.name}`),
      body: () => this.d.engine[tool]({ ref: info.id }),
      settle: () => true,
    }));
    this.d.forget();
    if (tool === 'sandbox.destroy') this.d.destroyed(info.id);
    return value;
  }

  /**
   * The sandbox expires `ttlSeconds` from now (null: never, the user only). With `extend`, a deadline
   * already later is kept and nothing is recorded; the answer is the sandbox as it is after.
   */
  async setTtl(ctx: AgentContext, ref: string, ttlSeconds: number | null, mode: TtlMode = 'set'): Promise<SandboxInfo> {
    const now = new Date();
    const { value } = await this.d.onSandbox<SandboxInfo>(ctx, ref, 'sandbox.ttl', { ref, ttlSeconds, mode }, (info) => ({
      args: { ref, sandboxId: info.id, ttlSeconds, mode, from: info.expiresAt },
      verdict: () => {
        if (!ctx.trusted) this.ttlLimits(ttlSeconds);
        return allowed('sandbox.ttl', 'within the create limits', `ttl ${info.name} ${ttlSeconds ?? 'none'}`);
      },
      body: async () => {
        const wanted = ttlSeconds === null ? Infinity : now.getTime() + ttlSeconds * 1000;
        const current = info.expiresAt === null ? Infinity : Date.parse(info.expiresAt);
        if (mode === 'extend' && current >= wanted) return info;
        return this.d.engine.ttl.set(info.id, ttlSeconds, now);
      },
      settle: (call, after) => {
        call.args = { ...call.args, to: after.expiresAt };
        return true;
      },
    }));
    this.d.forget();
    return value;
  }

  private ttlLimits(ttlSeconds: number | null): void {
    const max = this.d.policy().create.maxTtlSeconds;
    if (ttlSeconds === null)
      throw new GatewayDenial('create-limits', "agents may not take a sandbox's TTL away", `ask for at most ${max} seconds`);
    if (ttlSeconds > max)
      throw new GatewayDenial(
        'create-limits',
        `a TTL of ${ttlSeconds} seconds is over the ${max} agents may ask for`,
        `ask for at most ${max} seconds (policy create.maxTtlSeconds)`,
      );
  }

  /** Freezes every process of a running sandbox (Podman pause: the cgroup freezer under runc, runsc's own pause under gVisor). */
  pause(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    return this.change(ctx, ref, 'sandbox.pause', 'running');
  }

  /** Thaws a paused sandbox; its runner comes back with it. */
  resume(ctx: AgentContext, ref: string): Promise<SandboxInfo> {
    return this.change(ctx, ref, 'sandbox.resume', 'paused');
  }

  private async change(ctx: AgentContext, ref: string, tool: 'sandbox.pause' | 'sandbox.resume', from: SandboxInfo['state']) {
    const { value } = await this.d.onSandbox<SandboxInfo>(ctx, ref, tool, { ref }, (info) => ({
      args: { ref, sandboxId: info.id },
      verdict: () => {
        if (info.state !== from)
          throw new WardenError('E_CONFLICT', `sandbox ${info.name} is ${info.state}`, `${tool} needs a sandbox that is ${from}`);
        return allowed(tool, `${tool} of a sandbox the agent may act on`, `${tool} ${info.name}`);
      },
      body: () => this.d.engine[tool]({ ref: info.id }),
      settle: () => true,
    }));
    this.d.forget();
    return value;
  }
}
