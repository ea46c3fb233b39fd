// The ledger at a glance: size, head, the signing key, the latest checkpoint; and what can be done.
import type { LedgerSummary } from '../../../../shared/types/ledger.js';
import { useStore } from '../../store/index.js';
import type { LedgerController } from '../../live/ledger-controller.js';
import { formatCount, formatTime, groupHex, shortHash } from './ledger-format.js';

interface Props {
  ctl: LedgerController;
  onExport(): void;
}

function Facts({ summary }: { summary: LedgerSummary }) {
  const cp = summary.latestCheckpoint;
  return (
    <dl className="ledger-facts" data-testid="ledger-facts">
      <div>
        <dt>Entries</dt>
        <dd data-testid="ledger-size">{formatCount(summary.size)}</dd>
      </div>
      <div>
        <dt>Head</dt>
        <dd className="mono" title={summary.headHash}>
          {shortHash(summary.headHash, 16)}
        </dd>
      </div>
      <div>
        <dt>Signing key</dt>
        <dd
          className="mono"
          title={`SHA-256 of the public key: ${summary.key.fingerprint}\n${groupHex(summary.key.fingerprint, 4)}\n${summary.key.keyName} (key id ${summary.key.keyId})`}
          data-testid="ledger-key"
        >
          {groupHex(summary.key.fingerprint, 4)}
          <span className="sub">
            {summary.key.keyName} · id {summary.key.keyId}
          </span>
        </dd>
      </div>
      <div>
        <dt>Latest checkpoint</dt>
        <dd data-testid="ledger-checkpoint">
          {cp ? (
            <>
              {formatCount(cp.size)} entries
              <span className="sub" title={cp.time}>
                {formatTime(cp.time)} · {cp.reason}
              </span>
            </>
          ) : (
            <span className="muted">none yet</span>
          )}
        </dd>
      </div>
    </dl>
  );
}

export function LedgerHeader({ ctl, onExport }: Props) {
  const summary = useStore((s) => s.ledgerSummary);
  const verifying = useStore((s) => s.ledgerVerify.phase === 'running');
  const exporting = useStore((s) => s.ledgerExport.phase === 'running');
  const loading = useStore((s) => s.ledgerLoading !== 'idle');
  return (
    <>
      <header className="view-head">
        <h1 id="ledger-title">Ledger</h1>
        <span className="muted">append-only, hash-chained, signed</span>
        <span className="grow" />
        <button
          type="button"
          className="btn"
          onClick={() => void ctl.refresh()}
          disabled={loading}
          title="Read the ledger again (the CLI and other processes append too)"
        >
          Refresh
        </button>
        <button type="button" className="btn" onClick={onExport} disabled={exporting || !summary}>
          {exporting ? 'Exporting…' : 'Export report'}
        </button>
        <button type="button" className="btn primary" onClick={() => void ctl.verify()} disabled={verifying || !summary}>
          {verifying ? 'Verifying…' : 'Verify'}
        </button>
      </header>
      {summary ? <Facts summary={summary} /> : null}
    </>
  );
}
