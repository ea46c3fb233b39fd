// The pool's sandboxes as Podman has them: every container of this home with a warden.pool label,
// claimed or not (owner-records.ts tells which). Read at open to adopt or sweep what a previous
// process left, whether it closed cleanly or was killed.
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { PodmanConnection } from '../podman/connection.js';
import { isThisHome, LABEL, MANAGED_FILTER } from '../podman/labels.js';
import { infoFromListEntry, type LibpodListEntry } from '../podman/sandbox-info.js';

export interface PoolContainer {
  /** Its shape key (shape.ts). */
  key: string;
  info: SandboxInfo;
}

export async function listPoolContainers(conn: PodmanConnection, homeId: string): Promise<PoolContainer[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [MANAGED_FILTER, LABEL.pool] }));
  const entries = await conn.libpod<LibpodListEntry[]>('GET', `/containers/json?all=true&filters=${filters}`, undefined, 'pool list');
  return (
    entries
      // An empty key is no pool's: the label blanked on a sandbox made from a pooled one's snapshot.
      .filter((e) => e.Labels?.[LABEL.home] === homeId && isThisHome(e.Labels, homeId) && !!e.Labels[LABEL.pool])
      .map((e) => ({ key: e.Labels![LABEL.pool]!, info: infoFromListEntry(e) }))
  );
}
