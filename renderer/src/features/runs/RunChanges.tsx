// The run's Changes tab: what it changed in its sandbox's /workspace since it began (ChangesView lays
// it out), with the command that takes it home.
import { useCallback } from 'react';
import { useServices } from '../../services.js';
import { ChangesView } from '../changes/ChangesView.js';

export function RunChanges({ runId }: { runId: string }) {
  const { client } = useServices();
  const load = useCallback(() => client.call('run.diff', { id: runId }), [client, runId]);
  return (
    <ChangesView
      testId="run-changes"
      load={load}
      fullCommand={`warden run diff ${runId}`}
      hint={
        <>
          take them home: <span className="mono">warden run export {runId} --repo DIR --branch NAME</span>
        </>
      }
    />
  );
}
