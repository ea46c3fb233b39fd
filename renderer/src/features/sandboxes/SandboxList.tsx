// The live list of sandboxes: every change (also ones made with the podman CLI) arrives as an
// event and lands in the store; rows re-render only when their own sandbox changes. A sandbox Podman
// did not answer for shows as last seen with a note saying so; a list that failed says why, with a retry.
import { memo } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { SandboxInfo } from '../../../../shared/types/sandbox.js';
import { formatPercent } from '../../lib/format.js';
import { formatByteSize } from '../../../../shared/types/units.js';
import { useStore } from '../../store/index.js';
import { SandboxActions } from './SandboxActions.js';
import { Sparkline } from './Sparkline.js';
import { StateBadge } from './StateBadge.js';
import { TierBadge } from './TierBadge.js';
import { Uptime } from './Uptime.js';
import { CurrentRun } from './CurrentRun.js';
import { useRovingRows } from '../../lib/roving-rows.js';
import { useServices } from '../../services.js';
import { loadSandboxList } from '../../live/sandbox-list-load.js';
import { CodeText } from '../../lib/code-text.js';
import './sandbox-list.css';

const SandboxRow = memo(function SandboxRow({ sandbox }: { sandbox: SandboxInfo }) {
  const busy = useStore((s) => s.busy[sandbox.id]);
  const navigate = useStore((s) => s.navigate);
  const running = sandbox.state === 'running';
  const open = () => navigate({ name: 'sandbox', id: sandbox.id });
  const stuck = sandbox.unreachable;
  return (
    <>
      <tr
        className={stuck ? 'row unreachable' : 'row'}
        data-testid="sandbox-row"
        data-name={sandbox.name}
        data-state={sandbox.state}
        data-unreachable={stuck ? 'true' : undefined}
        onClick={open}
        onKeyDown={(e) => {
          if (e.key === 'Enter') open();
        }}
      >
        <td className="name" title={`${sandbox.name}\n${sandbox.id}\nimage: ${sandbox.image}`}>
          <span className="name-text">{sandbox.name}</span>
          <span className="sub mono">{sandbox.id.slice(0, 12)}</span>
        </td>
        <td>
          {stuck ? (
            <span className="badge warn" data-testid="sandbox-unreachable" title={stuck.message}>
              no answer
            </span>
          ) : (
            <StateBadge state={sandbox.state} busy={busy} />
          )}
          {sandbox.oomKilled ? <span className="badge warn">OOM</span> : null}
          {sandbox.exitReason && !sandbox.oomKilled ? (
            <span className="badge warn" title={sandbox.exitReason}>
              limit
            </span>
          ) : null}
        </td>
        <td className="mono image col-wide" title={sandbox.image}>
          {sandbox.image}
        </td>
        <td>
          <TierBadge runtime={sandbox.runtime} />
        </td>
        <td className="mono col-wide">{running ? <Uptime since={sandbox.startedAt} /> : '–'}</td>
        <td>
          {running ? (
            <Sparkline sandboxId={sandbox.id} metric="cpu" label={(s) => formatPercent(s.cpuPercent)} testId="cpu-spark" />
          ) : (
            <span className="muted">–</span>
          )}
        </td>
        <td>
          {running ? (
            <Sparkline
              sandboxId={sandbox.id}
              metric="memory"
              label={(s) => `${formatByteSize(s.memoryBytes)} / ${formatByteSize(s.memoryLimitBytes)}`}
              testId="mem-spark"
            />
          ) : (
            <span className="muted">{formatByteSize(sandbox.limits.memoryBytes)}</span>
          )}
        </td>
        <td>
          <CurrentRun sandboxId={sandbox.id} />
        </td>
        <td className="right">
          <SandboxActions sandbox={sandbox} />
        </td>
      </tr>
      {stuck ? (
        <tr className="row-note" data-testid="sandbox-unreachable-note" data-name={sandbox.name}>
          <td colSpan={9}>
            <strong>{stuck.message}.</strong> <CodeText text={stuck.hint ?? ''} />
          </td>
        </tr>
      ) : null}
    </>
  );
});

/** Why the list did not load, what to do, and a retry: never an endless "loading…". */
function ListError() {
  const error = useStore((s) => s.sandboxesError);
  const services = useServices();
  if (!error) return null;
  const retry = () => void loadSandboxList(services.client, useStore).catch(() => undefined);
  return (
    <div className="alert error" role="alert" data-testid="sandbox-list-error">
      <strong>The sandbox list did not load: {error.message}.</strong>
      {error.hint ? (
        <div className="muted">
          <CodeText text={error.hint} />
        </div>
      ) : null}
      <button type="button" className="btn" data-testid="sandbox-list-retry" onClick={retry}>
        Retry
      </button>
    </div>
  );
}

export function SandboxList() {
  const sandboxes = useStore(
    useShallow((s) => Object.values(s.sandboxes).sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.name.localeCompare(b.name))),
  );
  const loaded = useStore((s) => s.sandboxesLoaded);
  const failed = useStore((s) => s.sandboxesError !== null);
  const warm = useStore((s) => s.warm);
  const openDialog = useStore((s) => s.openDialog);
  const roving = useRovingRows<HTMLTableSectionElement>('tr[data-testid="sandbox-row"]');
  return (
    <section className="view" aria-labelledby="sandboxes-title">
      <header className="view-head">
        <h1 id="sandboxes-title">Sandboxes</h1>
        <span className="muted count" data-testid="sandbox-count">
          {loaded ? `${sandboxes.length} ${sandboxes.length === 1 ? 'sandbox' : 'sandboxes'}` : failed ? 'not loaded' : 'loading…'}
        </span>
        {warm > 0 ? (
          <span
            className="muted count"
            data-testid="pool-count"
            title="Started and attested sandboxes waiting in the warm pool: the next creates of their shape take them at once"
          >
            {`${warm} warm`}
          </span>
        ) : null}
        <span className="grow" />
        <button type="button" className="btn primary" onClick={() => openDialog({ kind: 'create' })}>
          New sandbox
        </button>
      </header>
      <ListError />
      {loaded && sandboxes.length === 0 ? (
        <div className="empty" data-testid="sandbox-empty">
          <p>No sandboxes yet.</p>
          <p className="muted">Create one here, or let an agent create one through the API.</p>
        </div>
      ) : (
        <table className="table sandbox-table" data-testid="sandbox-table">
          <thead>
            <tr>
              {/* Below 1280 px the col-wide columns give way; the name's title and the detail keep them. */}
              <th className="col-name">Name</th>
              <th className="col-state">State</th>
              <th className="col-image col-wide">Image</th>
              <th className="col-tier" title="Isolation tier: the runtime the sandbox runs under">
                Tier
              </th>
              <th className="col-uptime col-wide">Uptime</th>
              <th className="col-cpu">CPU</th>
              <th className="col-memory">Memory</th>
              <th className="col-run">Run</th>
              <th className="col-actions right">Actions</th>
            </tr>
          </thead>
          <tbody ref={roving.ref} onKeyDown={roving.onKeyDown}>
            {sandboxes.map((s) => (
              <SandboxRow key={s.id} sandbox={s} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
