// The confirmations of the snapshot verbs that lose or make something: a reset says what is lost, a
// fork asks for the new sandbox's name (checked as the engine will check it), a removal says what
// goes. Each is a Modal (focus kept inside, Escape closes).
import { useState } from 'react';
import { SANDBOX_NAME_PATTERN, type SandboxInfo } from '../../../../shared/types/sandbox.js';
import { formatByteSize } from '../../../../shared/types/units.js';
import type { SnapshotInfo } from '../../../../shared/types/snapshot.js';
import { Modal } from '../shell/Modal.js';

export type SnapshotDialog = { kind: 'reset' | 'fork' | 'remove'; snapshot: SnapshotInfo };

interface Props {
  dialog: SnapshotDialog;
  sandbox: SandboxInfo;
  onClose(): void;
  onConfirm(name?: string): void;
}

function when(s: SnapshotInfo): string {
  return new Date(s.createdAt).toLocaleString();
}

export function SnapshotDialogView({ dialog, sandbox, onClose, onConfirm }: Props) {
  const s = dialog.snapshot;
  const [name, setName] = useState(`${sandbox.name}-${s.tag}`.slice(0, 63));
  const nameOk = SANDBOX_NAME_PATTERN.test(name);
  const actions = (label: string, danger: boolean, disabled = false) => (
    <div className="modal-actions">
      <button type="button" className="btn" onClick={onClose}>
        Cancel
      </button>
      <button
        type="submit"
        className={`btn ${danger ? 'danger' : 'primary'}`}
        disabled={disabled}
        data-testid={`confirm-snapshot-${dialog.kind}`}
      >
        {label}
      </button>
    </div>
  );
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    if (dialog.kind === 'fork') {
      if (nameOk) onConfirm(name);
    } else onConfirm();
  };
  if (dialog.kind === 'reset')
    return (
      <Modal title={`Reset ${sandbox.name} to ${s.tag}?`} onClose={onClose} testId="snapshot-reset-dialog">
        <form onSubmit={submit}>
          <p>
            The sandbox goes back to how it was at <b>{when(s)}</b>. What will be lost:
          </p>
          <ul className="loss">
            <li>every change since then, in /workspace and outside it (files written, packages installed)</li>
            <li>{sandbox.state === 'running' ? 'every process running in it, and its open terminals' : 'the stopped container'}</li>
            <li>its container id: it is made again under the same name with a new one</li>
          </ul>
          <p className="muted">Its snapshots are kept. The audit ledger keeps its record of everything it did.</p>
          {actions(`Reset to ${s.tag}`, true)}
        </form>
      </Modal>
    );
  if (dialog.kind === 'remove')
    return (
      <Modal title={`Remove snapshot ${s.tag}?`} onClose={onClose} testId="snapshot-remove-dialog">
        <form onSubmit={submit}>
          <p>
            Its image ({formatByteSize(s.rootBytes)}) and workspace archive ({formatByteSize(s.workspaceBytes)}) are deleted: {sandbox.name}{' '}
            can no longer be reset to how it was at {when(s)}.
          </p>
          {actions(`Remove ${s.tag}`, true)}
        </form>
      </Modal>
    );
  return (
    <Modal title={`Fork ${sandbox.name} from ${s.tag}`} onClose={onClose} testId="snapshot-fork-dialog">
      <form onSubmit={submit}>
        <p>A new sandbox, made from this snapshot, runs beside {sandbox.name} (which is left as it is).</p>
        <label className="field">
          <span>Name of the new sandbox</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            aria-invalid={!nameOk}
            aria-describedby="fork-name-help"
            data-testid="fork-name"
            spellCheck={false}
          />
        </label>
        <p id="fork-name-help" className={`small ${nameOk ? 'muted' : 'error-text'}`}>
          {nameOk
            ? 'Letters, digits, _ . - (at most 63).'
            : 'A name starts with a letter or digit and holds only letters, digits, _ . - (at most 63).'}
        </p>
        {actions('Fork', false, !nameOk)}
      </form>
    </Modal>
  );
}
