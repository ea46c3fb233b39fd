// Destroying is final: the dialog names the sandbox and what goes with it.
import { useRef, useState } from 'react';
import { useServices } from '../../services.js';
import { useStore } from '../../store/index.js';
import { Modal } from '../shell/Modal.js';
import { runLifecycle } from './actions.js';

export function DestroyDialog({ id }: { id: string }) {
  const services = useServices();
  // The last known record: the removal event may arrive before the destroy call answers, and the
  // dialog stays until then (closing it is what hands focus back).
  const live = useStore((s) => s.sandboxes[id]);
  const last = useRef(live);
  if (live) last.current = live;
  const sandbox = last.current;
  const [busy, setBusy] = useState(false);
  const close = () => useStore.getState().openDialog(null);
  if (!sandbox) return null;
  const confirm = async () => {
    setBusy(true);
    const ok = await runLifecycle(services, sandbox, 'destroy');
    setBusy(false);
    if (ok) {
      // Away from the gone sandbox first, so the dialog's focus return finds the list, not its old button.
      const view = useStore.getState().view;
      if (view.name === 'sandbox' && view.id === id) useStore.getState().navigate({ name: 'sandboxes' });
      close();
    }
  };
  return (
    <Modal title={`Destroy ${sandbox.name}?`} onClose={close} testId="destroy-dialog">
      <p>This removes the sandbox for good. What will be lost:</p>
      <ul className="loss">
        <li>{sandbox.state === 'running' ? 'every process running in it, without a chance to finish' : 'the stopped container'}</li>
        <li>its filesystem: anything written outside the workspace, including /tmp</li>
        <li>open terminals and the runs of agents working in it</li>
      </ul>
      {sandbox.workspace ? (
        <p className="muted">
          The workspace folder <code>{sandbox.workspace}</code> stays on the host.
        </p>
      ) : null}
      <p className="muted">The audit ledger keeps its record of everything it did.</p>
      <div className="modal-actions">
        <button type="button" className="btn" onClick={close}>
          Keep it
        </button>
        <button
          type="button"
          className="btn danger"
          disabled={busy}
          onClick={() => void confirm()}
          data-testid="confirm-destroy"
          title={`Destroy ${sandbox.name}`}
        >
          {busy ? 'Destroying…' : `Destroy ${sandbox.name}`}
        </button>
      </div>
    </Modal>
  );
}
