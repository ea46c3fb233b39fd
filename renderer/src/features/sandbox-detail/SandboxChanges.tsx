// The sandbox's Changes tab: everything that changed in its /workspace since it was made (or last
// reset or forked), laid out by the same ChangesView as a run's.
import { useCallback } from 'react';
import { useServices } from '../../services.js';
import { ChangesView } from '../changes/ChangesView.js';

export function SandboxChanges({ sandboxId, name }: { sandboxId: string; name: string }) {
  const { client } = useServices();
  const load = useCallback(() => client.call('sandbox.diff', { ref: sandboxId }), [client, sandboxId]);
  return (
    <ChangesView
      testId="sandbox-changes"
      load={load}
      fullCommand={`warden sandbox diff ${name}`}
      hint={
        <>
          the same as <span className="mono">warden sandbox diff {name}</span>
        </>
      }
    />
  );
}
