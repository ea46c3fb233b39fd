// The last verification: a progress bar while it runs, then a clear pass or the first bad entry.
import type { LedgerVerifyOutcome } from '../../../../shared/types/ledger.js';
import { useStore } from '../../store/index.js';
import type { LedgerController } from '../../live/ledger-controller.js';
import { formatCount, formatMs, groupHex, REASON_TEXT, shortHash } from './ledger-format.js';

function Passed({ outcome }: { outcome: LedgerVerifyOutcome }) {
  const cp = outcome.checkpoint;
  return (
    <div className="verify-result pass" role="status" data-testid="verify-result" data-ok="true">
      <strong className="verdict">✓ Verified: {formatCount(outcome.entries)} entries intact</strong>
      <span>
        every hash, every link and the Merkle root
        {cp ? (
          <>
            {' '}
            against the signed checkpoint of <b>{formatCount(cp.size)}</b> entries (root{' '}
            <code title={cp.root}>{shortHash(cp.root, 16)}</code>, from the {cp.source})
          </>
        ) : (
          ' (no signed checkpoint yet: one is signed every minute while entries are added, and on every export)'
        )}
        .
      </span>
      <span className="muted">
        Key{' '}
        <code title={outcome.key.fingerprint} data-testid="verify-fingerprint">
          {groupHex(outcome.key.fingerprint, 8)}
        </code>{' '}
        · {outcome.key.keyName} · took {formatMs(outcome.durationMs)}
      </span>
    </div>
  );
}

function Failed({ outcome, ctl }: { outcome: LedgerVerifyOutcome; ctl: LedgerController }) {
  const bad = outcome.firstBad!;
  return (
    <div
      className="verify-result fail"
      role="alert"
      data-testid="verify-result"
      data-ok="false"
      data-first-bad={bad.seq}
      data-reason={bad.reason}
    >
      <strong className="verdict">
        ✗ Verification failed at entry #{bad.seq}: {bad.reason}
      </strong>
      <span>
        Entry #{bad.seq}: {REASON_TEXT[bad.reason]}. Entries before it check out; nothing from it on can be trusted.
      </span>
      <span className="muted">
        {formatCount(outcome.entries)} entries in the file · key{' '}
        <code title={outcome.key.fingerprint}>{groupHex(outcome.key.fingerprint, 4)}</code> · took {formatMs(outcome.durationMs)}{' '}
        <button type="button" className="btn small" onClick={() => void ctl.showEntry(bad.seq)}>
          Show entry #{bad.seq}
        </button>
      </span>
    </div>
  );
}

export function VerifyPanel({ ctl }: { ctl: LedgerController }) {
  const v = useStore((s) => s.ledgerVerify);
  if (v.phase === 'idle') return null;
  if (v.phase === 'running') {
    const pct = v.total > 0 ? Math.min(100, (v.done / v.total) * 100) : 0;
    return (
      <div className="verify-result running" data-testid="verify-progress">
        <span>
          Verifying… {formatCount(v.done)} of {formatCount(v.total)} entries
        </span>
        <div
          className="progress"
          role="progressbar"
          aria-label="Verification progress"
          aria-valuemin={0}
          aria-valuemax={v.total}
          aria-valuenow={v.done}
        >
          <div className="progress-fill" style={{ width: `${pct}%` }} />
        </div>
      </div>
    );
  }
  if (v.phase === 'error') {
    return (
      <div className="verify-result fail" role="alert" data-testid="verify-result" data-ok="error">
        <strong className="verdict">Verification could not run: {v.error.message}</strong>
        {v.error.hint ? <span className="muted">{v.error.hint}</span> : null}
      </div>
    );
  }
  return v.outcome.firstBad ? <Failed outcome={v.outcome} ctl={ctl} /> : <Passed outcome={v.outcome} />;
}
