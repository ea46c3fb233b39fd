// An `egress` sandbox's recent connections, for its detail view: what its programs reached (or were
// refused) through the egress proxy, newest first. They come from the tool calls of the agents' runs
// in this sandbox (a connection belongs to the exec in flight when it was made), so a connection
// made while no agent's exec ran there is only in the ledger; the panel says so.
import { useEffect, useMemo } from 'react';
import type { CallConnection } from '../../../../shared/types/run.js';
import { useServices } from '../../services.js';
import { useStore } from '../../store/index.js';
import { ConnectionLine } from './ConnectionLine.js';

/** Runs whose calls this panel loads when they are not here yet (the sandbox's newest). */
const RUNS_LOADED = 8;
const SHOWN = 20;

interface Shown extends CallConnection {
  agent: string;
}

export function SandboxNetwork({ sandboxId }: { sandboxId: string }) {
  const { client } = useServices();
  const runs = useStore((s) => s.runs);
  const runCalls = useStore((s) => s.runCalls);
  const mine = useMemo(
    () =>
      Object.values(runs)
        .filter((r) => r.sandboxId === sandboxId)
        .sort((a, b) => b.startedAt.localeCompare(a.startedAt))
        .slice(0, RUNS_LOADED),
    [runs, sandboxId],
  );
  const runIds = mine.map((r) => r.id).join(',');

  // Calls pushed since this window opened are here already; the runs' earlier calls are loaded once.
  useEffect(() => {
    const { runCallsComplete, setRunDetail } = useStore.getState();
    for (const id of runIds ? runIds.split(',') : []) {
      if (runCallsComplete[id]) continue;
      client.call('run.get', { id }).then(setRunDetail, () => undefined); // a run the gateway no longer has: nothing to show
    }
  }, [client, runIds]);

  const shown = useMemo(() => {
    const list: Shown[] = [];
    for (const run of mine) {
      const calls = [...(runCalls[run.id] ?? [])].reverse();
      for (const call of calls) for (const c of [...(call.connections ?? [])].reverse()) list.push({ ...c, agent: run.agent });
    }
    return list.slice(0, SHOWN);
  }, [mine, runCalls]);

  return (
    <section className="sandbox-network" aria-labelledby="sandbox-network-title" data-testid="sandbox-network">
      <h2 id="sandbox-network-title">Network</h2>
      {shown.length === 0 ? (
        <span className="muted small">No connection from an agent’s exec yet (the ledger records every one: net.connect).</span>
      ) : (
        <ul className="small">
          {shown.map((c) => (
            <li key={c.connId} data-testid="sandbox-connection" data-decision={c.decision} title={`${c.rule} · by ${c.agent}`}>
              <ConnectionLine connection={c} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
