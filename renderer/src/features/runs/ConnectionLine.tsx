// One connection through the egress proxy as the panel shows it everywhere (a call's timeline, a
// sandbox's network panel): its decision, destination, and bytes or the rule that refused it.
import { formatByteSize } from '../../../../shared/types/units.js';
import type { CallConnection } from '../../../../shared/types/run.js';

export function ConnectionLine({ connection: c }: { connection: CallConnection }) {
  return (
    <>
      <span className={c.decision === 'allow' ? 'ok-text' : 'bad-text'}>{c.decision === 'allow' ? 'allowed' : 'denied'}</span>{' '}
      <span className="mono">
        {c.host}:{c.port}
      </span>{' '}
      <span className="muted">
        {c.decision === 'allow' ? `${formatByteSize(c.bytesOut)} out · ${formatByteSize(c.bytesIn)} in${c.open ? ' · open' : ''}` : c.rule}
      </span>
    </>
  );
}
