// What the last export produced: the two files, what they cover, where they went, how to check them.
import { useStore } from '../../store/index.js';
import type { LedgerController } from '../../live/ledger-controller.js';
import { formatCount } from './ledger-format.js';

export function ExportPanel({ ctl, desktop }: { ctl: LedgerController; desktop: boolean }) {
  const e = useStore((s) => s.ledgerExport);
  const names = useStore((s) => s.sandboxes);
  if (e.phase === 'idle') return null;
  if (e.phase === 'running') {
    return (
      <div className="export-result" data-testid="export-result" data-phase="running">
        Exporting: signing a checkpoint and verifying the whole ledger…
      </div>
    );
  }
  if (e.phase === 'error') {
    return (
      <div className="export-result fail" role="alert" data-testid="export-result" data-phase="error">
        <strong>The report could not be exported: {e.error.message}</strong>
        {e.error.hint ? <span className="muted"> {e.error.hint}</span> : null}
        <button type="button" className="btn ghost small" onClick={() => ctl.dismissExport()}>
          Dismiss
        </button>
      </div>
    );
  }
  const { scope, result } = e;
  const sandbox = scope.sandboxId ? (names[scope.sandboxId]?.name ?? scope.sandboxId.slice(0, 12)) : null;
  const range =
    scope.fromSeq !== undefined || scope.toSeq !== undefined ? `entries ${scope.fromSeq ?? 1}–${scope.toSeq ?? 'newest'}` : 'all entries';
  return (
    <div className="export-result" role="status" data-testid="export-result" data-phase="done">
      <div>
        <strong>
          Exported {formatCount(result.entries)} {result.entries === 1 ? 'entry' : 'entries'}
        </strong>{' '}
        ({range}
        {sandbox ? ` of sandbox ${sandbox}` : ''}) {desktop ? 'as two files:' : 'to your downloads folder:'}
      </div>
      {desktop ? (
        // The desktop app refuses every download (electron/main/hardening.ts), these included.
        <div className="muted small">
          If no file appeared, this build of the app does not save downloads: run{' '}
          <code>warden audit export --out bundle.json --html report.html</code> instead.
        </div>
      ) : null}
      <ul>
        <li>
          <a href={e.jsonUrl} download={result.jsonName} data-testid="export-json">
            {result.jsonName}
          </a>{' '}
          <span className="muted">
            evidence bundle: check it anywhere with <code>warden audit verify --report {result.jsonName}</code>
          </span>
        </li>
        <li>
          <a href={e.htmlUrl} download={result.htmlName} data-testid="export-html">
            {result.htmlName}
          </a>{' '}
          <span className="muted">report to read or print</span>
        </li>
      </ul>
      <button type="button" className="btn ghost small" onClick={() => ctl.dismissExport()}>
        Dismiss
      </button>
    </div>
  );
}
