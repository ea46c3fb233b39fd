// The lifecycle buttons for one sandbox, as the list row and the detail header both show them.
import type { SandboxInfo } from '../../../../shared/types/sandbox.js';
import { useServices } from '../../services.js';
import { useStore } from '../../store/index.js';
import { runLifecycle } from './actions.js';

export function SandboxActions({ sandbox }: { sandbox: SandboxInfo }) {
  const services = useServices();
  const busy = useStore((s) => s.busy[sandbox.id]);
  const openDialog = useStore((s) => s.openDialog);
  const running = sandbox.state === 'running';
  const paused = sandbox.state === 'paused';
  const act = (action: 'start' | 'stop' | 'pause' | 'resume') => (e: React.MouseEvent) => {
    e.stopPropagation();
    void runLifecycle(services, sandbox, action);
  };
  return (
    <span className="actions">
      {running || paused ? (
        <button type="button" className="btn small" disabled={!!busy} onClick={act('stop')} aria-label={`Stop ${sandbox.name}`}>
          Stop
        </button>
      ) : (
        <button type="button" className="btn small" disabled={!!busy} onClick={act('start')} aria-label={`Start ${sandbox.name}`}>
          Start
        </button>
      )}
      {paused ? (
        <button type="button" className="btn small" disabled={!!busy} onClick={act('resume')} aria-label={`Resume ${sandbox.name}`}>
          Resume
        </button>
      ) : (
        <button
          type="button"
          className="btn small"
          disabled={!!busy || !running}
          onClick={act('pause')}
          aria-label={`Pause ${sandbox.name}`}
        >
          Pause
        </button>
      )}
      <button
        type="button"
        className="btn small danger"
        disabled={!!busy}
        onClick={(e) => {
          e.stopPropagation();
          openDialog({ kind: 'destroy', id: sandbox.id });
        }}
        aria-label={`Destroy ${sandbox.name}`}
      >
        Destroy
      </button>
    </span>
  );
}
