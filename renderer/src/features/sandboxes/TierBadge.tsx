// The isolation tier at a glance: gVisor (a user-space kernel between the agent and the host) or
// the plain container runtime. It reads the runtime inspect reported, never the one asked for.
import { runtimeTier } from '../../../../shared/types/sandbox.js';

export function TierBadge({ runtime }: { runtime: string }) {
  const tier = runtimeTier(runtime);
  return (
    <span className={`badge tier${tier === 'gVisor' ? ' tier-gvisor' : ''}`} data-testid="sandbox-tier" title={`runtime: ${runtime}`}>
      {tier}
    </span>
  );
}
