// The pool's sandboxes as Podman has them: every container of this home with a warden.pool label,
// claimed or not (owner-records.ts tells which). Read at open to adopt or sweep what a previous
// process left, whether it closed cleanly or was killed. Bounded as the sandbox list is: a wedged
// container must not hold a door's start-up (the pool is then not opened, and the door says why).
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { PodmanConnection } from '../podman/connection.js';
import { isThisHome, LABEL, MANAGED_FILTER } from '../podman/labels.js';
import { infoFromListEntry, type LibpodListEntry } from '../podman/sandbox-info.js';
import { listBoundsFrom, wholeListLate } from '../podman/sandbox-list.js';

export interface PoolContainer {
  /** Its shape key (shape.ts). */
  key: string;
  info: SandboxInfo;
}

export async function listPoolContainers(
  conn: PodmanConnection,
  homeId: string,
  boundMs = listBoundsFrom(process.env).wholeMs,
): Promise<PoolContainer[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [MANAGED_FILTER, LABEL.pool] }));
  const path = `/containers/json?all=true&filters=${filters}`;
  const entries = await conn.libpodWithin<LibpodListEntry[]>(boundMs, path, 'pool list', () => wholeListLate(boundMs));
  return (
    entries
      // An empty key is no pool's: the label blanked on a sandbox made from a pooled one's snapshot.
      .filter((e) => e.Labels?.[LABEL.home] === homeId && isThisHome(e.Labels, homeId) && !!e.Labels[LABEL.pool])
      .map((e) => ({ key: e.Labels![LABEL.pool]!, info: infoFromListEntry(e) }))
  );
}
