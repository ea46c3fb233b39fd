// One sandbox: its resources live and a shell in it first (the terminal starts on screen at every
// window size, right under a graph strip that folds away), then its runs, what it is, its attestation
// (under the terminal, or beside it on a wide screen), and its whole life on one timeline. Beside the
// shell, two tabs: what changed in its workspace, and its snapshots (take, reset, fork, remove).
import { useRef, useState } from 'react';
import type { SandboxInfo } from '../../../../shared/types/sandbox.js';
import { formatByteSize } from '../../../../shared/types/units.js';
import { useStore } from '../../store/index.js';
import { ResourceGraphs } from '../graphs/ResourceGraphs.js';
import { SandboxActions } from '../sandboxes/SandboxActions.js';
import { StateBadge } from '../sandboxes/StateBadge.js';
import { TierBadge } from '../sandboxes/TierBadge.js';
import { Uptime } from '../sandboxes/Uptime.js';
import { TerminalView } from '../terminal/TerminalView.js';
import { SandboxRuns } from '../runs/SandboxRuns.js';
import { SandboxNetwork } from '../runs/SandboxNetwork.js';
import { AttestationPanel } from './AttestationPanel.js';
import { SandboxChanges } from './SandboxChanges.js';
import { SnapshotsPanel } from '../snapshots/SnapshotsPanel.js';
import { RESETTING } from '../snapshots/snapshot-actions.js';

type DetailTab = 'shell' | 'changes' | 'snapshots';
const TABS: Array<[DetailTab, string]> = [
  ['shell', 'Shell'],
  ['changes', 'Changes'],
  ['snapshots', 'Snapshots'],
];
import { SandboxTimeline } from '../timeline/RunTimeline.js';

function Facts({ sandbox }: { sandbox: SandboxInfo }) {
  const l = sandbox.limits;
  const facts: Array<[string, React.ReactNode]> = [
    ['Image', sandbox.image],
    ['Runtime', sandbox.runtime],
    ['Network', sandbox.network],
    ['Limits', `${formatByteSize(l.memoryBytes)} · ${l.cpus} CPU · ${l.pids} pids`],
    ['Disk', l.diskBytes === null ? '–' : `${formatByteSize(l.diskBytes)}${l.diskEnforced ? '' : ' (not enforced on this host)'}`],
    ['Root', l.readOnlyRoot ? `read-only, /tmp ${l.tmpSizeBytes ? formatByteSize(l.tmpSizeBytes) : ''}` : 'writable'],
    ['Workspace', sandbox.workspace ?? 'none'],
    ['Uptime', sandbox.state === 'running' ? <Uptime since={sandbox.startedAt} /> : '–'],
    ['Expires', sandbox.expiresAt ? new Date(sandbox.expiresAt).toLocaleString() : 'never'],
  ];
  if (sandbox.exitReason) facts.push(['Ended', sandbox.exitReason]);
  return (
    <dl className="facts" data-testid="sandbox-facts">
      {facts.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd className="mono">{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function SandboxDetail({ id }: { id: string }) {
  const live = useStore((s) => s.sandboxes[id]);
  const loaded = useStore((s) => s.sandboxesLoaded);
  const busy = useStore((s) => s.busy[id]);
  const navigate = useStore((s) => s.navigate);
  const [graphs, setGraphs] = useState(true);
  const [tab, setTab] = useState<DetailTab>('shell');
  // While a reset replaces the container, the old one is gone before the new one answers: keep
  // showing the last known record until the view moves to the new id.
  const last = useRef(live);
  if (live) last.current = live;
  const sandbox = live ?? (busy === RESETTING ? last.current : undefined);
  if (!sandbox) {
    return (
      <section className="view">
        <div className="empty" data-testid="sandbox-gone">
          <p>{loaded ? 'This sandbox is gone.' : 'loading…'}</p>
          <button type="button" className="btn" onClick={() => navigate({ name: 'sandboxes' })}>
            Back to sandboxes
          </button>
        </div>
      </section>
    );
  }
  const running = sandbox.state === 'running';
  return (
    <section className="view detail" aria-labelledby="detail-title" data-testid="sandbox-detail">
      <header className="view-head">
        <button type="button" className="btn ghost" onClick={() => navigate({ name: 'sandboxes' })} aria-label="Back to sandboxes">
          ←
        </button>
        <h1 id="detail-title" title={sandbox.name}>
          {sandbox.name}
        </h1>
        <StateBadge state={sandbox.state} busy={busy} />
        <TierBadge runtime={sandbox.runtime} />
        <span className="muted mono">{sandbox.id.slice(0, 12)}</span>
        <span className="grow" />
        <button
          type="button"
          className="btn small"
          aria-expanded={graphs}
          aria-controls="detail-graphs"
          onClick={() => setGraphs((g) => !g)}
          data-testid="toggle-graphs"
        >
          {graphs ? 'Hide graphs' : 'Show graphs'}
        </button>
        <SandboxActions sandbox={sandbox} />
      </header>
      {/* Folded, the graphs stay mounted (hidden): their figures keep following the samples. */}
      <div id="detail-graphs" className="graph-strip" hidden={!graphs}>
        <ResourceGraphs sandboxId={sandbox.id} />
      </div>
      <div className="detail-tabs" role="tablist" aria-label="Sandbox views">
        {TABS.map(([t, label]) => (
          <button
            key={t}
            id={`detail-tab-${t}`}
            type="button"
            role="tab"
            aria-selected={tab === t}
            aria-controls={`detail-pane-${t}`}
            className={`btn small${tab === t ? ' primary' : ''}`}
            onClick={() => setTab(t)}
            data-testid={`detail-tab-${t}`}
          >
            {label}
          </button>
        ))}
      </div>
      {/* From 1800 px the facts stand beside the terminal instead of under it. */}
      <div className="detail-body">
        {/* The shell stays mounted behind the other tabs: its session and scrollback outlive a look at the changes. */}
        <div id="detail-pane-shell" role="tabpanel" aria-labelledby="detail-tab-shell" hidden={tab !== 'shell'} className="detail-pane">
          {running ? (
            <TerminalView key={sandbox.startedAt ?? ''} sandboxId={sandbox.id} />
          ) : (
            <div className="terminal-pane empty" data-testid="terminal-off">
              <p>The sandbox is {sandbox.state}: start it to open a shell.</p>
            </div>
          )}
        </div>
        {/* The other panes ask for their data each time they are opened. */}
        <div
          id="detail-pane-changes"
          role="tabpanel"
          aria-labelledby="detail-tab-changes"
          hidden={tab !== 'changes'}
          className="detail-pane detail-pane-panel"
        >
          {tab === 'changes' ? <SandboxChanges sandboxId={sandbox.id} name={sandbox.name} /> : null}
        </div>
        <div
          id="detail-pane-snapshots"
          role="tabpanel"
          aria-labelledby="detail-tab-snapshots"
          hidden={tab !== 'snapshots'}
          className="detail-pane detail-pane-panel"
        >
          {tab === 'snapshots' ? <SnapshotsPanel sandbox={sandbox} /> : null}
        </div>
        <div className="detail-side">
          <SandboxRuns sandboxId={sandbox.id} />
          {sandbox.network === 'egress' ? <SandboxNetwork sandboxId={sandbox.id} /> : null}
          <Facts sandbox={sandbox} />
          <AttestationPanel sandboxId={sandbox.id} running={running} />
        </div>
      </div>
      <SandboxTimeline sandbox={sandbox} />
    </section>
  );
}
