// Loads the sandbox list into the store, on every snapshot and from the list's Retry. A failed list
// (Podman did not answer it within its bound, say) is kept on the list and shown with a retry, never
// left as an endless "loading…"; an engine that is gone is the engine banner's, so it is passed on.
import { toErrorInfo } from '../../../shared/errors.js';
import type { WardenClient } from '../api/client.js';
import type { Store } from '../store/index.js';

/** `current`: false once a newer snapshot began, so an old answer never overwrites a newer one. */
export async function loadSandboxList(client: WardenClient, store: Store, current: () => boolean = () => true): Promise<void> {
  store.getState().setSandboxesError(null);
  try {
    const list = await client.call('sandbox.list', {});
    if (current()) store.getState().setSandboxes(list);
  } catch (err) {
    const info = toErrorInfo(err);
    if (info.code === 'E_ENGINE_UNREACHABLE') throw err;
    if (current()) store.getState().setSandboxesError(info);
  }
}
