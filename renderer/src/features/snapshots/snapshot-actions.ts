// The snapshot verbs from the detail view, through the typed contract: each says what it is doing
// while it runs (the panel shows it), and a reset or fork puts the sandbox it made in the store at
// once. A reset replaces the container (same name, a new id): the old one is marked busy so the view
// keeps showing it until the new one is there, then the view moves to the new id.
import type { SandboxInfo } from '../../../../shared/types/sandbox.js';
import type { SnapshotInfo } from '../../../../shared/types/snapshot.js';
import type { Services } from '../../services.js';
import { useStore } from '../../store/index.js';

/** Busy text a sandbox carries while it is being reset (the detail view holds on to it meanwhile). */
export const RESETTING = 'resetting';

export function takeSnapshot(services: Services, sandbox: SandboxInfo, tag: string): Promise<SnapshotInfo> {
  return services.client.call('snapshot.take', tag ? { ref: sandbox.id, tag } : { ref: sandbox.id });
}

export function removeSnapshot(services: Services, sandbox: SandboxInfo, tag: string): Promise<SnapshotInfo> {
  return services.client.call('snapshot.remove', { ref: sandbox.id, tag });
}

export async function resetSandbox(services: Services, sandbox: SandboxInfo, tag: string): Promise<SandboxInfo> {
  const s = useStore.getState();
  s.setBusy(sandbox.id, RESETTING);
  try {
    const info = await services.client.call('snapshot.reset', { ref: sandbox.id, to: tag });
    const now = useStore.getState();
    now.upsertSandbox(info);
    if (info.id !== sandbox.id) {
      now.removeSandbox(sandbox.id);
      services.stats.forget(sandbox.id);
    }
    const view = now.view;
    if (view.name === 'sandbox' && view.id === sandbox.id) now.navigate({ name: 'sandbox', id: info.id });
    return info;
  } finally {
    useStore.getState().setBusy(sandbox.id, null);
  }
}

export async function forkSandbox(services: Services, sandbox: SandboxInfo, tag: string, name: string): Promise<SandboxInfo> {
  const info = await services.client.call('snapshot.fork', { ref: sandbox.id, from: tag, name });
  useStore.getState().upsertSandbox(info);
  return info;
}
