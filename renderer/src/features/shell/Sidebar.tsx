import { useShallow } from 'zustand/react/shallow';
import { useStore } from '../../store/index.js';
import type { View } from '../../store/ui-slice.js';

const ITEMS: Array<{ name: 'sandboxes' | 'runs' | 'ledger'; label: string }> = [
  { name: 'sandboxes', label: 'Sandboxes' },
  { name: 'runs', label: 'Runs' },
  { name: 'ledger', label: 'Ledger' },
];

function EngineStatus() {
  const { status, info } = useStore(useShallow((s) => ({ status: s.engineStatus, info: s.engineInfo })));
  const label = status === 'connected' ? `Podman ${info?.version ?? ''}` : status === 'unknown' ? 'Podman…' : `Podman ${status}`;
  return (
    <div className="engine-status" data-testid="engine-status" data-status={status} title={info?.socketPath ?? ''}>
      <span className={`dot ${status}`} />
      <span>{label}</span>
      {info && status === 'connected' ? (
        <span className="muted small">
          {info.rootless ? 'rootless' : 'rootful'} · {info.defaultRuntime ?? 'runc'}
        </span>
      ) : null}
    </div>
  );
}

export function Sidebar() {
  const view = useStore((s) => s.view);
  const navigate = useStore((s) => s.navigate);
  const count = useStore((s) => Object.keys(s.sandboxes).length);
  const approvals = useStore((s) => Object.keys(s.approvals).length);
  const current = view.name === 'sandbox' ? 'sandboxes' : view.name;
  return (
    <nav className="sidebar" aria-label="Main">
      <div className="brand">
        <span className="logo" aria-hidden="true">
          ◆
        </span>
        Warden
      </div>
      <ul>
        {ITEMS.map((item) => (
          <li key={item.name}>
            <button
              type="button"
              className={`nav${current === item.name ? ' active' : ''}`}
              aria-current={current === item.name ? 'page' : undefined}
              onClick={() => navigate({ name: item.name } as View)}
              data-testid={`nav-${item.name}`}
            >
              {item.label}
              {item.name === 'sandboxes' && count > 0 ? <span className="pill">{count}</span> : null}
              {item.name === 'runs' && approvals > 0 ? (
                <span className="pill attention" data-testid="approvals-badge" data-count={approvals} title="approvals waiting">
                  {approvals}
                  <span className="sr-only"> {approvals === 1 ? 'approval' : 'approvals'} waiting</span>
                </span>
              ) : null}
            </button>
          </li>
        ))}
      </ul>
      <span className="grow" />
      <EngineStatus />
    </nav>
  );
}
