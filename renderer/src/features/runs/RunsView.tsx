// Agents' runs: filled in when the gateway's run methods are on the contract.
export function RunsView() {
  return (
    <section className="view" aria-labelledby="runs-title" data-testid="runs-view">
      <header className="view-head">
        <h1 id="runs-title">Runs</h1>
      </header>
      <div className="empty">
        <p>No agent runs yet.</p>
        <p className="muted">When an agent works in a sandbox through the API or MCP, its tool calls appear here as they happen.</p>
      </div>
    </section>
  );
}
