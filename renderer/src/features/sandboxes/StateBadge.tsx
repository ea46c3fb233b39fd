import type { SandboxState } from '../../../../shared/types/sandbox.js';

export function StateBadge({ state, busy }: { state: SandboxState; busy?: string | undefined }) {
  return (
    <span className={`badge state-${busy ? 'busy' : state}`} data-testid="sandbox-state">
      {busy ?? state}
    </span>
  );
}
