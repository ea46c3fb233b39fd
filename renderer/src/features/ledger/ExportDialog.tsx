// Export a report: the whole ledger, one sandbox, or a range of entries. The evidence bundle (JSON)
// and the HTML report are saved as downloads, and the view says what they hold and how to check them.
import { useState, type FormEvent } from 'react';
import { Modal } from '../shell/Modal.js';
import { useStore } from '../../store/index.js';
import { resolveSandboxRef, type LedgerExportScope } from '../../store/ledger-slice.js';
import type { LedgerController } from '../../live/ledger-controller.js';
import { formatCount } from './ledger-format.js';

interface Props {
  ctl: LedgerController;
  onClose(): void;
}

function seqField(value: string, name: string): { seq?: number; error?: string } {
  const v = value.trim();
  if (!v) return {};
  if (!/^\d+$/.test(v) || Number(v) < 1) return { error: `${name} is an entry number (1 or more)` };
  return { seq: Number(v) };
}

export function ExportDialog({ ctl, onClose }: Props) {
  const filterSandbox = useStore((s) => s.ledgerFilters.sandbox);
  const size = useStore((s) => s.ledgerSummary?.size ?? 0);
  const [sandbox, setSandbox] = useState(filterSandbox);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [error, setError] = useState<string | null>(null);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const f = seqField(from, 'From');
    const t = seqField(to, 'To');
    const problem = f.error ?? t.error ?? (f.seq !== undefined && t.seq !== undefined && f.seq > t.seq ? 'From comes after To' : null);
    if (problem) return setError(problem);
    const scope: LedgerExportScope = {};
    const sandboxId = resolveSandboxRef(sandbox, useStore.getState().sandboxes);
    if (sandboxId) scope.sandboxId = sandboxId;
    if (f.seq !== undefined) scope.fromSeq = f.seq;
    if (t.seq !== undefined) scope.toSeq = t.seq;
    onClose();
    void ctl.exportReport(scope);
  };

  return (
    <Modal title="Export an audit report" onClose={onClose} testId="export-dialog">
      <form onSubmit={submit} noValidate>
        <p className="muted small dialog-text">
          A JSON evidence bundle (entries, inclusion proofs, a freshly signed checkpoint, the public key) that anyone can check with{' '}
          <code>warden audit verify --report FILE</code>, and a readable HTML report. Leave the fields empty for the whole ledger (
          {formatCount(size)} entries, at most 50,000 per bundle).
        </p>
        <div className="grid2">
          <label className="field span-all">
            <span className="field-label">Sandbox (optional)</span>
            <input
              name="sandbox"
              value={sandbox}
              onChange={(e) => setSandbox(e.target.value)}
              placeholder="every sandbox"
              spellCheck={false}
              autoComplete="off"
            />
          </label>
          <label className="field">
            <span className="field-label">From entry</span>
            <input name="fromSeq" inputMode="numeric" value={from} onChange={(e) => setFrom(e.target.value)} placeholder="1" />
          </label>
          <label className="field">
            <span className="field-label">To entry</span>
            <input
              name="toSeq"
              inputMode="numeric"
              value={to}
              onChange={(e) => setTo(e.target.value)}
              placeholder={size ? String(size) : 'the newest'}
            />
          </label>
        </div>
        {error ? (
          <div className="alert error" role="alert">
            {error}
          </div>
        ) : null}
        <div className="modal-actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn primary">
            Export
          </button>
        </div>
      </form>
    </Modal>
  );
}
