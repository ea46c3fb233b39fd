// The audit ledger: what was done, by whom, in which sandbox, newest first; a verification anyone
// can run from here, and reports to hand to someone who does not trust this machine.
import { useEffect, useState } from 'react';
import { createPortal } from 'react-dom';
import { useServices } from '../../services.js';
import { useStore } from '../../store/index.js';
import { ledgerController } from '../../live/ledger-controller.js';
import { EntriesTable } from './EntriesTable.js';
import { ExportDialog } from './ExportDialog.js';
import { ExportPanel } from './ExportPanel.js';
import { LedgerFilters } from './LedgerFilters.js';
import { LedgerHeader } from './LedgerHeader.js';
import { VerifyPanel } from './VerifyPanel.js';
import './ledger.css';

export function LedgerView() {
  const { client } = useServices();
  const ctl = ledgerController(client, useStore);
  const error = useStore((s) => s.ledgerError);
  const loaded = useStore((s) => s.ledgerLoaded);
  const [exporting, setExporting] = useState(false);

  // Coming to the view: catch up with what other processes appended meanwhile.
  useEffect(() => {
    if (useStore.getState().link === 'open') void ctl.refresh();
  }, [ctl]);

  return (
    <section className="view ledger" aria-labelledby="ledger-title" data-testid="ledger-view">
      <LedgerHeader ctl={ctl} onExport={() => setExporting(true)} />
      {error && !loaded ? (
        <div className="empty" role="alert" data-testid="ledger-error">
          <p>The ledger could not be read: {error.message}</p>
          {error.hint ? <p className="muted">{error.hint}</p> : null}
        </div>
      ) : (
        <>
          {error ? (
            <div className="alert error" role="alert">
              {error.message}
              {error.hint ? <span className="muted"> {error.hint}</span> : null}
            </div>
          ) : null}
          <VerifyPanel ctl={ctl} />
          <ExportPanel ctl={ctl} desktop={client.kind === 'electron'} />
          <LedgerFilters />
          <EntriesTable ctl={ctl} />
        </>
      )}
      {/* Outside #app-shell, which a modal makes inert. */}
      {exporting ? createPortal(<ExportDialog ctl={ctl} onClose={() => setExporting(false)} />, document.body) : null}
    </section>
  );
}
