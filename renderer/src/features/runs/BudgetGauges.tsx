// What a run has spent of its budgets: steps, wall time (ticking while it is active), output, and
// consecutive failures against the breaker's threshold with the breaker's state.
import type { ReactNode } from 'react';
import type { RunInfo } from '../../../../shared/types/run.js';
import { formatByteSize } from '../../../../shared/types/units.js';
import { formatMs, runElapsed } from './run-format.js';
import { useNow } from './use-now.js';

interface GaugeProps {
  id: string;
  label: string;
  value: number;
  max: number;
  text: string;
  foot?: ReactNode;
  /** The foot as plain text, for its title when a narrow gauge cuts it. */
  footTitle?: string;
  /** Force a level (the breaker's state says more than its count). */
  level?: 'ok' | 'warn' | 'bad';
}

function Gauge({ id, label, value, max, text, foot, footTitle, level }: GaugeProps) {
  const share = max > 0 ? Math.min(1, value / max) : 0;
  const lvl = level ?? (share >= 1 ? 'bad' : share >= 0.8 ? 'warn' : 'ok');
  return (
    <div className="gauge" data-testid={`gauge-${id}`} data-value={value} data-max={max} title={`${label}: ${text}`}>
      <div className="gauge-label">{label}</div>
      <div className="gauge-value mono" data-testid={`gauge-${id}-text`}>
        {text}
      </div>
      <div
        className={`gauge-bar ${lvl}`}
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={Math.min(value, max)}
        aria-valuetext={text}
      >
        <span style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </div>
      <div className="gauge-foot muted small" title={footTitle}>
        {foot ?? '\u00a0'}
      </div>
    </div>
  );
}

export function BudgetGauges({ run }: { run: RunInfo }) {
  const b = run.budgets;
  const active = run.status === 'active';
  const now = useNow(1000, active || run.breaker.state === 'open');
  const elapsed = runElapsed(run, now);
  const br = run.breaker;
  const probeIn = br.state === 'open' && br.openedAt ? Date.parse(br.openedAt) + b.breaker.cooldownMs - now : null;
  const wallFoot =
    run.status === 'expired'
      ? 'expired: no more calls in this run'
      : run.status === 'interrupted'
        ? 'interrupted: Warden stopped during this run'
        : active
          ? 'since the first call'
          : 'ended';
  const probe = probeIn !== null ? (probeIn > 0 ? ` · probe call in ${formatMs(probeIn)}` : ' · next call is the probe') : '';
  return (
    <div className="gauges" data-testid="budget-gauges">
      <Gauge
        id="steps"
        label="Steps"
        value={run.calls}
        max={b.maxCalls}
        text={`${run.calls} / ${b.maxCalls}`}
        foot="denied calls count too"
        footTitle="denied calls count too"
      />
      <Gauge
        id="wall"
        label="Wall time"
        value={elapsed}
        max={b.wallTimeMs}
        text={`${formatMs(elapsed)} / ${formatMs(b.wallTimeMs)}`}
        foot={wallFoot}
        footTitle={wallFoot}
      />
      <Gauge
        id="output"
        label="Output"
        value={run.outputBytes}
        max={b.outputBytes}
        text={`${formatByteSize(run.outputBytes)} / ${formatByteSize(b.outputBytes)}`}
        foot="stdout + stderr"
        footTitle="stdout + stderr"
      />
      <Gauge
        id="breaker"
        label="Failures in a row"
        value={br.consecutiveFailures}
        max={b.breaker.failures}
        text={`${br.consecutiveFailures} / ${b.breaker.failures}`}
        level={br.state === 'open' ? 'bad' : br.state === 'half-open' ? 'warn' : undefined}
        footTitle={`breaker ${br.state}${probe}`}
        foot={
          <span data-testid="breaker-state" data-state={br.state}>
            breaker <b className={`breaker-text-${br.state}`}>{br.state}</b>
            {probe}
          </span>
        }
      />
    </div>
  );
}
