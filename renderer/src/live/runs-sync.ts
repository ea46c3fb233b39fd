// Applies the gateway's pushed run, call, output and approval events to the store, outside React.
// On every (re)connect: a snapshot of the runs and pending approvals, and the selected run's calls
// loaded again (calls pushed while the link was down are not replayed; output then has a hole, said so).
import { isWardenError } from '../../../shared/errors.js';
import type { WardenClient } from '../api/client.js';
import type { Store } from '../store/index.js';

export function startRunsSync(client: WardenClient, store: Store): { snapshot(): Promise<void>; stop(): void } {
  const state = () => store.getState();
  let generation = 0;
  // Snapshots also follow engine reconnects, when this link missed nothing; only a dropped link loses events.
  let dropped = false;
  const loading = new Set<string>();

  /** Loads a run's calls whole; the answer merges with calls pushed meanwhile. */
  const loadRun = async (id: string): Promise<void> => {
    if (loading.has(id)) return;
    loading.add(id);
    try {
      state().setRunDetail(await client.call('run.get', { id }));
    } catch (err) {
      // A run the gateway no longer has (it restarted, or trimmed old runs): nothing to show.
      if (isWardenError(err) && err.code === 'E_NOT_FOUND' && state().selectedRunId === id) state().selectRun(null);
      else if (!isWardenError(err) || err.code !== 'E_NOT_FOUND')
        state().toast('error', `Could not load run ${id}: ${(err as Error).message}`);
    } finally {
      loading.delete(id);
    }
  };

  const snapshot = async (): Promise<void> => {
    const mine = ++generation;
    const [runs, approvals] = await Promise.all([client.call('run.list', {}), client.call('approval.list', {})]);
    if (mine !== generation) return;
    state().setRuns(runs);
    state().setApprovals(approvals);
    if (dropped) {
      dropped = false;
      state().resynced();
    }
    const selected = state().selectedRunId;
    if (selected) await loadRun(selected);
  };

  // Opening a run whose calls are not all here loads them.
  let selected = state().selectedRunId;
  const followSelection = store.subscribe((s) => {
    if (s.selectedRunId === selected) return;
    selected = s.selectedRunId;
    if (selected && !s.runCallsComplete[selected] && s.link === 'open') void loadRun(selected);
  });

  const offs = [
    client.on('run.updated', (run) => state().upsertRun(run)),
    client.on('run.call', (call) => state().upsertCall(call)),
    client.on('run.output', (output) => state().appendOutput(output)),
    client.on('approval.requested', (approval) => state().addApproval(approval)),
    client.on('approval.decided', (approval) => state().removeApproval(approval.id)),
    followSelection,
    client.onLink((link) => {
      if (link !== 'open') dropped = true;
    }),
  ];

  return {
    snapshot,
    stop: () => {
      generation++;
      for (const off of offs) off();
    },
  };
}
