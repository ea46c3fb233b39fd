// Sandbox actions from any view: busy state while in flight, the result applied at once (the
// engine event that follows confirms it), and errors shown with what to do.
import { toErrorInfo } from '../../../../shared/errors.js';
import type { SandboxSpecInput } from '../../../../shared/types/sandbox.js';
import type { SandboxInfo } from '../../../../shared/types/sandbox.js';
import type { Services } from '../../services.js';
import { useStore } from '../../store/index.js';

export type LifecycleAction = 'start' | 'stop' | 'restart' | 'pause' | 'resume' | 'destroy';

const BUSY: Record<LifecycleAction, string> = {
  start: 'starting',
  stop: 'stopping',
  restart: 'restarting',
  pause: 'pausing',
  resume: 'resuming',
  destroy: 'destroying',
};

export async function runLifecycle(services: Services, sandbox: SandboxInfo, action: LifecycleAction): Promise<boolean> {
  const s = useStore.getState();
  s.setBusy(sandbox.id, BUSY[action]);
  try {
    if (action === 'destroy') {
      await services.client.call('sandbox.destroy', { ref: sandbox.id });
      useStore.getState().removeSandbox(sandbox.id);
      services.stats.forget(sandbox.id);
    } else {
      const info = await services.client.call(`sandbox.${action}`, { ref: sandbox.id });
      useStore.getState().upsertSandbox(info);
    }
    return true;
  } catch (err) {
    const info = toErrorInfo(err);
    useStore.getState().toast('error', `Could not ${action} ${sandbox.name}: ${info.message}`, info.hint);
    return false;
  } finally {
    useStore.getState().setBusy(sandbox.id, null);
  }
}

export async function createSandbox(services: Services, spec: SandboxSpecInput): Promise<SandboxInfo> {
  const info = await services.client.call('sandbox.create', spec);
  useStore.getState().upsertSandbox(info);
  return info;
}
