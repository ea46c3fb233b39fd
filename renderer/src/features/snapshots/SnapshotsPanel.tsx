// A sandbox's snapshots in its detail view: take one (with a tag, or the time as tag), list them with
// their sizes and time, and reset to, fork or remove one after a confirmation. What is running is
// said while it runs; a failure is shown here, with what to do, until the next action.
import { useCallback, useEffect, useState } from 'react';
import { createPortal } from 'react-dom';
import { toErrorInfo } from '../../../../shared/errors.js';
import type { SandboxInfo } from '../../../../shared/types/sandbox.js';
import { SNAPSHOT_TAG_PATTERN, type SnapshotInfo } from '../../../../shared/types/snapshot.js';
import { formatByteSize } from '../../../../shared/types/units.js';
import { useServices } from '../../services.js';
import { useStore } from '../../store/index.js';
import { SnapshotDialogView, type SnapshotDialog } from './SnapshotDialogs.js';
import { forkSandbox, removeSnapshot, resetSandbox, takeSnapshot } from './snapshot-actions.js';
import './snapshots.css';

export function SnapshotsPanel({ sandbox }: { sandbox: SandboxInfo }) {
  const services = useServices();
  const [list, setList] = useState<SnapshotInfo[] | null>(null);
  const [tag, setTag] = useState('');
  const [working, setWorking] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [dialog, setDialog] = useState<SnapshotDialog | null>(null);
  const tagOk = tag === '' || SNAPSHOT_TAG_PATTERN.test(tag);

  // By name: snapshots are kept by name, and a reset gives the sandbox a new id under the same one.
  const reload = useCallback(async () => {
    try {
      setList(await services.client.call('snapshot.list', { ref: sandbox.name }));
    } catch (err) {
      setError(toErrorInfo(err).message);
    }
  }, [services, sandbox.name]);
  useEffect(() => {
    void reload();
  }, [reload]);

  /** Runs one verb: its progress said, its failure shown, the list read again after. */
  const run = async (what: string, act: () => Promise<string>) => {
    setWorking(what);
    setError(null);
    setDone(null);
    try {
      setDone(await act());
    } catch (err) {
      const info = toErrorInfo(err);
      setError(info.hint ? `${info.message} (${info.hint})` : info.message);
    } finally {
      setWorking(null);
      await reload();
    }
  };

  const take = (e: React.FormEvent) => {
    e.preventDefault();
    if (!tagOk || working) return;
    void run(`Taking a snapshot of ${sandbox.name}${tag ? ` as ${tag}` : ''}: the sandbox is paused while its root is saved…`, async () => {
      const s = await takeSnapshot(services, sandbox, tag);
      setTag('');
      return `Snapshot ${s.tag} taken (root ${formatByteSize(s.rootBytes)}, workspace ${formatByteSize(s.workspaceBytes)}).`;
    });
  };

  const confirm = (name?: string) => {
    const d = dialog!;
    setDialog(null);
    const s = d.snapshot;
    if (d.kind === 'reset')
      void run(`Resetting ${sandbox.name} to ${s.tag}: making it again from the snapshot…`, async () => {
        await resetSandbox(services, sandbox, s.tag);
        return `${sandbox.name} is back at ${s.tag}.`;
      });
    else if (d.kind === 'fork')
      void run(`Forking ${name} from ${s.tag}…`, async () => {
        const made = await forkSandbox(services, sandbox, s.tag, name!);
        useStore.getState().toast('info', `Forked ${made.name} from ${sandbox.name} at ${s.tag}.`);
        return `Forked ${made.name} from ${s.tag}.`;
      });
    else
      void run(`Removing snapshot ${s.tag}…`, async () => {
        await removeSnapshot(services, sandbox, s.tag);
        return `Snapshot ${s.tag} removed.`;
      });
  };

  const running = sandbox.state === 'running';
  return (
    <section className="snapshots" aria-labelledby="snapshots-title" data-testid="snapshots">
      <h2 id="snapshots-title">Snapshots</h2>
      <form className="snapshot-take" onSubmit={take}>
        <label className="snapshot-tag">
          <span className="small muted">Tag</span>
          <input
            value={tag}
            onChange={(e) => setTag(e.target.value)}
            placeholder="optional"
            aria-invalid={!tagOk}
            aria-describedby="snapshot-tag-help"
            maxLength={64}
            spellCheck={false}
            data-testid="snapshot-tag"
          />
        </label>
        <button type="submit" className="btn primary small" disabled={!tagOk || !!working || !running} data-testid="snapshot-take">
          Take snapshot
        </button>
        <span id="snapshot-tag-help" className={`small ${tagOk ? 'muted' : 'error-text'}`}>
          {!running
            ? `Start ${sandbox.name} to take a snapshot.`
            : tagOk
              ? 'Saves /workspace and the root filesystem’s changes; without a tag, the time names it.'
              : 'A tag starts with a letter or digit and holds only letters, digits, _ . - (at most 64).'}
        </span>
      </form>
      {working ? (
        <p className="snapshot-progress small" role="status" data-testid="snapshot-progress">
          <span className="spinner" aria-hidden="true" /> {working}
        </p>
      ) : null}
      {error ? (
        <p className="alert error small" role="alert" data-testid="snapshot-error">
          {error}
        </p>
      ) : null}
      {done && !working ? (
        <p className="small" role="status" data-testid="snapshot-done">
          {done}
        </p>
      ) : null}
      {list === null ? (
        <p className="muted small">loading snapshots…</p>
      ) : list.length === 0 ? (
        <p className="muted small" data-testid="snapshots-empty">
          No snapshots of {sandbox.name} yet.
        </p>
      ) : (
        <table className="snapshot-list" data-testid="snapshot-list">
          <caption className="sr-only">Snapshots of {sandbox.name}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Tag</th>
              <th scope="col">Taken</th>
              <th scope="col">Root</th>
              <th scope="col">Workspace</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {[...list].reverse().map((s) => (
              <tr key={s.tag} data-testid="snapshot-row" data-tag={s.tag}>
                <td className="mono" title={`${s.tag}: image ${s.imageId.slice(0, 12)}, workspace sha256 ${s.workspaceSha256}`}>
                  {s.tag}
                </td>
                <td title={`taken by ${s.takenBy}`}>{new Date(s.createdAt).toLocaleString()}</td>
                <td>{formatByteSize(s.rootBytes)}</td>
                <td>{formatByteSize(s.workspaceBytes)}</td>
                <td className="snapshot-actions">
                  {(['reset', 'fork', 'remove'] as const).map((kind) => (
                    <button
                      key={kind}
                      type="button"
                      className={`btn small${kind === 'remove' ? ' ghost' : ''}`}
                      disabled={!!working}
                      onClick={() => setDialog({ kind, snapshot: s })}
                      aria-label={`${kind === 'reset' ? 'Reset to' : kind === 'fork' ? 'Fork from' : 'Remove'} snapshot ${s.tag}`}
                      data-testid={`snapshot-${kind}`}
                    >
                      {kind === 'reset' ? 'Reset…' : kind === 'fork' ? 'Fork…' : 'Remove…'}
                    </button>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {/* Outside the app shell, which a dialog makes inert. */}
      {dialog
        ? createPortal(
            <SnapshotDialogView dialog={dialog} sandbox={sandbox} onClose={() => setDialog(null)} onConfirm={confirm} />,
            document.body,
          )
        : null}
    </section>
  );
}
