// Agents' runs, live: the list (newest first) and the selected run's timeline of tool calls.
import { useStore } from '../../store/index.js';
import { RunDetail } from './RunDetail.js';
import { RunList } from './RunList.js';
import './runs.css';

function serverUrl(): string {
  return /^https?:$/.test(window.location.protocol) ? window.location.origin : 'http://127.0.0.1:PORT';
}

function HowToStart() {
  const url = serverUrl();
  return (
    <div className="empty runs-empty" data-testid="runs-empty">
      <p>No agent runs yet.</p>
      <p className="muted">
        When an agent works in a sandbox through Warden, each of its tool calls appears here as it happens. To start one, give the agent a
        token:
      </p>
      <pre className="howto mono">warden token create --agent my-agent</pre>
      <p className="muted">then let it call the HTTP API with that token…</p>
      <pre className="howto mono">{`curl -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
     -d '{"name":"demo"}' ${url}/v1/sandboxes
curl -NH "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
     -d '{"cmd":"uname -a"}' ${url}/v1/sandboxes/demo/exec`}</pre>
      <p className="muted">…or connect it over MCP (e.g. in Claude Code's MCP config):</p>
      <pre className="howto mono">{`{
  "command": "warden",
  "args": ["mcp", "--run", "task-1"],
  "env": { "WARDEN_TOKEN": "wdn_…" }
}`}</pre>
      <p className="muted">
        Calls the policy marks <code>ask</code> wait for your answer in a prompt at the top of every view (the policy is{' '}
        <code>$WARDEN_HOME/policy.yaml</code>).
      </p>
    </div>
  );
}

export function RunsView() {
  const loaded = useStore((s) => s.runsLoaded);
  const count = useStore((s) => Object.keys(s.runs).length);
  const active = useStore((s) => Object.values(s.runs).filter((r) => r.status === 'active').length);
  const selected = useStore((s) => s.selectedRunId);
  return (
    <section className="view runs-view" aria-labelledby="runs-title" data-testid="runs-view">
      <header className="view-head">
        <h1 id="runs-title">Runs</h1>
        <span className="muted count" data-testid="run-count">
          {loaded ? `${count} ${count === 1 ? 'run' : 'runs'}${active ? `, ${active} active` : ''}` : 'loading…'}
        </span>
      </header>
      {!loaded ? (
        <div className="empty muted">loading runs…</div>
      ) : count === 0 ? (
        <HowToStart />
      ) : (
        <div className="runs-body">
          <RunList />
          {selected ? (
            <RunDetail runId={selected} />
          ) : (
            <div className="run-detail empty" data-testid="run-none-selected">
              <p>Select a run to follow its tool calls.</p>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
