// The audit ledger: filled in when the ledger's methods are on the contract.
export function LedgerView() {
  return (
    <section className="view" aria-labelledby="ledger-title" data-testid="ledger-view">
      <header className="view-head">
        <h1 id="ledger-title">Ledger</h1>
      </header>
      <div className="empty">
        <p>The audit ledger is not available in this build yet.</p>
        <p className="muted">
          Use <code>warden audit verify</code> from a terminal meanwhile.
        </p>
      </div>
    </section>
  );
}
