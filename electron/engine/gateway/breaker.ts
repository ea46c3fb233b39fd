// A consecutive-failure breaker per run: closed → open after K failures in a row → after a cool-down
// one probe is let through (half-open) → closed only if that probe succeeds, open again if it fails.
import type { BreakerInfo } from '../../../shared/types/run.js';

export class Breaker {
  private state: BreakerInfo['state'] = 'closed';
  private failures = 0;
  private openedAt: number | null = null;
  private probeInFlight = false;

  constructor(
    private readonly limit: number,
    private readonly cooldownMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a call may go ahead now; a call let through while half-open is the probe. */
  admit(): { ok: true; probe: boolean } | { ok: false; retryAfterMs: number } {
    if (this.state === 'open') {
      const waited = this.now() - (this.openedAt ?? 0);
      if (waited < this.cooldownMs) return { ok: false, retryAfterMs: this.cooldownMs - waited };
      this.state = 'half-open';
    }
    if (this.state === 'half-open') {
      if (this.probeInFlight) return { ok: false, retryAfterMs: 1000 };
      this.probeInFlight = true;
      return { ok: true, probe: true };
    }
    return { ok: true, probe: false };
  }

  /** The outcome of a call that was admitted. */
  settle(success: boolean, probe: boolean): void {
    if (probe) this.probeInFlight = false;
    if (success) {
      this.failures = 0;
      if (probe || this.state === 'half-open') this.state = 'closed';
      if (this.state === 'closed') this.openedAt = null;
      return;
    }
    this.failures++;
    if (probe || this.state === 'half-open' || (this.state === 'closed' && this.failures >= this.limit)) {
      this.state = 'open';
      this.openedAt = this.now();
    }
  }

  /** A probe that never ran (denied by policy, say) gives its turn back. */
  release(probe: boolean): void {
    if (probe) this.probeInFlight = false;
  }

  info(): BreakerInfo {
    if (this.state === 'open' && this.now() - (this.openedAt ?? 0) >= this.cooldownMs) {
      return { state: 'half-open', consecutiveFailures: this.failures, openedAt: new Date(this.openedAt!).toISOString() };
    }
    return {
      state: this.state,
      consecutiveFailures: this.failures,
      openedAt: this.openedAt === null ? null : new Date(this.openedAt).toISOString(),
    };
  }
}

/** The breaker of a call the breaker does not apply to (destroying a sandbox: cleanup, not a failure). */
export const NO_BREAKER: Pick<Breaker, 'admit' | 'settle' | 'release'> = {
  admit: () => ({ ok: true, probe: false }),
  settle: () => undefined,
  release: () => undefined,
};
