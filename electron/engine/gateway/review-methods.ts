// A person's review of one sandbox from the control panel: its whole workspace diff, and its
// snapshots (take, list, remove, reset to one, fork one). Each is the gateway's own verb called as
// the window's person (trusted, as the CLI's user is), so a snapshot, reset or fork from the UI is
// filed into a run and recorded exactly as `warden sandbox snapshot …` is.
import type { HandlersOf, UiMethodParams } from '../../../shared/contracts/methods.js';
import type { WorkspaceDiff } from '../../../shared/types/diff.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { SnapshotInfo } from '../../../shared/types/snapshot.js';
import type { AgentContext } from './call-spec.js';
import type { Gateway } from './gateway.js';

export class ReviewMethods implements HandlersOf<'review'> {
  private readonly ctx: AgentContext;

  /** @param who the window's person, as runs and snapshots record it ("user (web shell)" …). */
  constructor(
    private readonly gateway: Gateway,
    who: string,
  ) {
    this.ctx = { agent: who, trusted: true, runKey: null };
  }

  async 'sandbox.diff'(p: UiMethodParams<'sandbox.diff'>): Promise<WorkspaceDiff> {
    return this.gateway.diffSandbox(this.ctx, p.ref);
  }

  async 'snapshot.list'(p: UiMethodParams<'snapshot.list'>): Promise<SnapshotInfo[]> {
    return this.gateway.snapshots.list(this.ctx, p.ref);
  }

  async 'snapshot.take'(p: UiMethodParams<'snapshot.take'>): Promise<SnapshotInfo> {
    return this.gateway.snapshots.snapshot(this.ctx, p.ref, p.tag);
  }

  async 'snapshot.remove'(p: UiMethodParams<'snapshot.remove'>): Promise<SnapshotInfo> {
    return this.gateway.snapshots.remove(this.ctx, p.ref, p.tag);
  }

  async 'snapshot.reset'(p: UiMethodParams<'snapshot.reset'>): Promise<SandboxInfo> {
    return this.gateway.snapshots.reset(this.ctx, p.ref, p.to);
  }

  async 'snapshot.fork'(p: UiMethodParams<'snapshot.fork'>): Promise<SandboxInfo> {
    return this.gateway.snapshots.fork(this.ctx, p.ref, p.from, p.name);
  }
}
