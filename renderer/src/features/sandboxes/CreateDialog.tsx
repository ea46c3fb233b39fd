// Every option of a sandbox spec, with the engine's defaults filled in or shown as placeholders.
import { useState } from 'react';
import { toErrorInfo, type ErrorInfo } from '../../../../shared/errors.js';
import { DEFAULT_SANDBOX_IMAGE, RUNTIMES, RUNTIME_TITLES, type NetworkMode } from '../../../../shared/types/sandbox.js';
import { useServices } from '../../services.js';
import { useStore } from '../../store/index.js';
import { Modal } from '../shell/Modal.js';
import { createSandbox } from './actions.js';
import { EMPTY_FORM, formToSpec, type FieldErrors, type SpecForm } from './spec-form.js';

const NETWORK_HINTS: Record<NetworkMode, string> = {
  none: 'no network at all',
  nat: 'outbound through NAT',
  egress: "only through Warden's proxy, to what the policy's egress rules allow",
};

function Field({ label, error, hint, children }: { label: string; error?: string | undefined; hint?: string; children: React.ReactNode }) {
  return (
    <label className={`field${error ? ' has-error' : ''}`}>
      <span className="field-label">{label}</span>
      {children}
      {error ? <span className="field-error">{error}</span> : hint ? <span className="field-hint">{hint}</span> : null}
    </label>
  );
}

export function CreateDialog() {
  const services = useServices();
  const close = () => useStore.getState().openDialog(null);
  const runtimes = useStore((s) => s.engineInfo?.runtimes ?? []);
  const [form, setForm] = useState<SpecForm>(EMPTY_FORM);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [failure, setFailure] = useState<ErrorInfo | null>(null);
  const [busy, setBusy] = useState(false);
  const set =
    <K extends keyof SpecForm>(key: K) =>
    (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>) => {
      const value = (
        e.target instanceof HTMLInputElement && e.target.type === 'checkbox' ? e.target.checked : e.target.value
      ) as SpecForm[K];
      setForm((f) => ({ ...f, [key]: value }));
    };

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const { spec, errors: found } = formToSpec(form);
    setErrors(found);
    if (!spec) return;
    setBusy(true);
    setFailure(null);
    try {
      const info = await createSandbox(services, spec);
      close();
      useStore.getState().toast('info', `Created ${info.name}`);
    } catch (err) {
      setFailure(toErrorInfo(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title="New sandbox" onClose={close} testId="create-dialog" wide>
      <form onSubmit={(e) => void submit(e)} noValidate>
        <div className="grid2">
          <Field label="Name" error={errors.name} hint="letters, digits, _ . - ; empty for a generated name">
            <input name="name" value={form.name} onChange={set('name')} autoComplete="off" spellCheck={false} />
          </Field>
          <Field label="Image" error={errors.image} hint={`empty for ${DEFAULT_SANDBOX_IMAGE}`}>
            <input name="image" value={form.image} onChange={set('image')} placeholder={DEFAULT_SANDBOX_IMAGE} spellCheck={false} />
          </Field>
          <Field label="Memory" error={errors.memory} hint="e.g. 512m, 2g">
            <input name="memory" value={form.memory} onChange={set('memory')} />
          </Field>
          <Field label="CPUs" error={errors.cpus} hint="cores, e.g. 0.5">
            <input name="cpus" value={form.cpus} onChange={set('cpus')} inputMode="decimal" />
          </Field>
          <Field label="Process limit" error={errors.pids}>
            <input name="pids" value={form.pids} onChange={set('pids')} inputMode="numeric" />
          </Field>
          <Field label="/tmp size" error={errors.tmpSize}>
            <input name="tmpSize" value={form.tmpSize} onChange={set('tmpSize')} />
          </Field>
          <Field label="Disk" error={errors.disk} hint="what it may write, e.g. 4g">
            <input name="disk" value={form.disk} onChange={set('disk')} />
          </Field>
          <Field label="Network" error={errors.network} hint={NETWORK_HINTS[form.network]}>
            <select name="network" value={form.network} onChange={set('network')}>
              <option value="none">none</option>
              <option value="nat">nat</option>
              <option value="egress">egress</option>
            </select>
          </Field>
          <Field
            label="Runtime"
            error={errors.runtime}
            hint={form.runtime === 'runsc' ? 'gVisor: the agent talks to a user-space kernel, not the host’s' : undefined}
          >
            <select name="runtime" value={form.runtime} onChange={set('runtime')}>
              <option value="">automatic</option>
              {RUNTIMES.map((r) => {
                const check = runtimes.find((c) => c.name === r);
                const usable = !check || check.works;
                return (
                  <option key={r} value={r} disabled={!usable}>
                    {RUNTIME_TITLES[r]}
                    {check && !check.works ? ` (${check.installed ? 'does not work here' : 'not installed'})` : ''}
                  </option>
                );
              })}
            </select>
          </Field>
          <Field label="Workspace folder" error={errors.workspace} hint="absolute host path mounted at /workspace; empty for none">
            <input name="workspace" value={form.workspace} onChange={set('workspace')} placeholder="/home/me/project" spellCheck={false} />
          </Field>
          <Field label="Time to live" error={errors.ttl} hint="destroyed after, e.g. 2h; empty to keep">
            <input name="ttl" value={form.ttl} onChange={set('ttl')} placeholder="never" />
          </Field>
          <Field label="Environment" error={errors.env} hint="KEY=VALUE per line">
            <textarea name="env" rows={3} value={form.env} onChange={set('env')} spellCheck={false} />
          </Field>
          <Field label="Labels" error={errors.labels} hint="key=value per line">
            <textarea name="labels" rows={3} value={form.labels} onChange={set('labels')} spellCheck={false} />
          </Field>
        </div>
        <label className="check">
          <input type="checkbox" name="readOnlyRoot" checked={form.readOnlyRoot} onChange={set('readOnlyRoot')} />
          Read-only root filesystem (writable /tmp and workspace only)
        </label>
        {failure ? (
          <div className="alert error" role="alert" data-testid="create-error">
            <strong>{failure.message}</strong>
            {failure.hint ? <div className="muted">{failure.hint}</div> : null}
          </div>
        ) : null}
        <div className="modal-actions">
          <button type="button" className="btn" onClick={close}>
            Cancel
          </button>
          <button type="submit" className="btn primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create and start'}
          </button>
        </div>
      </form>
    </Modal>
  );
}
