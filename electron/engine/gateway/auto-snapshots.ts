// Snapshots the policy takes by itself, so what an agent does can be undone: one before a run's first
// call that can change its sandbox (snapshots.onRunStart: "undo this run" is a reset to it), and one
// before each command a snapshot-then-allow rule matches. A snapshot that fails refuses the call (the
// caller records the denial) rather than letting it run unprotected. They are bounded, oldest
// automatic ones removed first and never one a person or agent took by asking, so a loop of risky
// commands cannot fill the disk.
import { WardenError } from '../../../shared/errors.js';
import type { Policy } from '../../../shared/types/policy.js';
import type { CallSnapshot, ToolCallInfo, ToolName } from '../../../shared/types/run.js';
import type { SnapshotInfo } from '../../../shared/types/snapshot.js';
import type { WardenEngine } from '../engine.js';
import { ownerOf, type SnapshotManifest } from '../snapshot/snapshot-store.js';
import { GatewayDenial } from './denial.js';
import type { Run } from './runs.js';

/** The calls that can change a sandbox: a run's first one is where it starts, for onRunStart. */
const CHANGING: ReadonlySet<ToolName> = new Set<ToolName>(['exec', 'file.write', 'file.mkdir', 'file.remove', 'file.move']);

/** Automatic snapshots one agent keeps over all sandbox names (gone sandboxes' too), on top of keepAutomatic per sandbox. */
export const MAX_AGENT_AUTOMATIC_SNAPSHOTS = 32;

export class AutoSnapshots {
  /** Run-start snapshots under way, so parallel first calls of one run take one. */
  private readonly starting = new Map<string, Promise<CallSnapshot>>();

  constructor(
    private readonly engine: WardenEngine,
    private readonly policy: () => Policy,
  ) {}

  /**
   * The snapshot a call needs before it runs, taken now (null: none). A run's start snapshot also
   * covers a snapshot-then-allow command that is its first changing call: the state is the same.
   * Throws a GatewayDenial ('snapshot-failed') when one is needed and cannot be taken.
   */
  async before(run: Run, call: ToolCallInfo, sandboxId: string, agent: string, ruleAsks: { snapshot?: boolean; source: string }) {
    if (CHANGING.has(call.tool) && run.startSnapshot === undefined) {
      if (this.policy().snapshots.onRunStart) return this.atRunStart(run, call, sandboxId, agent);
      run.startSnapshot = null; // off when the run started: a later change of policy does not make a later call its start
    }
    if (!ruleAsks.snapshot) return null;
    return this.take(run, call, sandboxId, agent, 'command').catch((err: unknown) => {
      throw GatewayDenial.snapshotFailed('command', ruleAsks.source, err);
    });
  }

  private atRunStart(run: Run, call: ToolCallInfo, sandboxId: string, agent: string): Promise<CallSnapshot> {
    const under = this.starting.get(run.id);
    if (under) return under;
    const take = this.take(run, call, sandboxId, agent, 'run-start')
      .then((snap) => {
        run.startSnapshot = snap;
        return snap;
      })
      .catch((err: unknown) => {
        throw GatewayDenial.snapshotFailed('run-start', 'snapshots.onRunStart', err);
      })
      .finally(() => this.starting.delete(run.id));
    this.starting.set(run.id, take);
    return take;
  }

  private async take(run: Run, call: ToolCallInfo, sandboxId: string, agent: string, reason: CallSnapshot['reason']) {
    const tag = reason === 'run-start' ? `${run.id}-start` : `${run.id}-call${call.index}`;
    const info = await this.engine.snapshots.snapshot(sandboxId, tag, agent, { reason, runId: run.id, callId: call.id });
    await this.prune(info, agent);
    return { sandbox: info.sandbox, tag: info.tag, reason };
  }

  /**
   * Past keepAutomatic of this sandbox's (by this agent), or MAX_AGENT_AUTOMATIC_SNAPSHOTS of the
   * agent's over every name, the oldest automatic ones go. One a sandbox runs on (reset or forked
   * from it) cannot be removed yet and is passed over; the one just taken always stays.
   */
  private async prune(taken: SnapshotInfo, agent: string): Promise<void> {
    const store = this.engine.snapshots.store;
    const autos = (name: string) => store.list(name).filter((m) => m.automatic && m.takenBy === agent);
    const keep = this.policy().snapshots.keepAutomatic;
    const why = 'an older automatic snapshot, past the most policy keeps (snapshots.keepAutomatic)';
    await this.removeOldest(autos(taken.sandbox), keep, taken, why);
    const all = store
      .names()
      .flatMap(autos)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    await this.removeOldest(
      all,
      MAX_AGENT_AUTOMATIC_SNAPSHOTS,
      taken,
      `an older automatic snapshot, past the ${MAX_AGENT_AUTOMATIC_SNAPSHOTS} an agent keeps`,
    );
  }

  private async removeOldest(oldestFirst: SnapshotManifest[], keep: number, taken: SnapshotInfo, why: string): Promise<void> {
    let excess = oldestFirst.length - keep;
    for (const m of oldestFirst) {
      if (excess <= 0) return;
      if (m.sandbox === taken.sandbox && m.tag === taken.tag && m.sandboxId === taken.sandboxId) continue;
      const removed = await this.engine.snapshots.remove(m.sandbox, m.tag, why, { owner: ownerOf(m) }).then(
        () => true,
        // In use by a sandbox made from it: the next one goes instead (one removed meanwhile is gone all the same).
        (err: unknown) => err instanceof WardenError && err.code === 'E_NOT_FOUND',
      );
      if (removed) excess--;
    }
  }
}
