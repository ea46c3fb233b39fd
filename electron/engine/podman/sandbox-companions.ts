// What Warden keeps running inside a sandbox beside the agent's own processes: its runner (the fast
// path for calls) and, in an `egress` sandbox, its egress socket served by this process and the relay
// that is its only way out. Both are let go on purpose before a stop, pause, restart or removal (not
// a loss) and started again after.
import type { PodmanConnection } from './connection.js';
import { runnersOf } from '../runner/runner-registry.js';
import { egressOf } from '../egress/egress-registry.js';

/** Starts them in a started sandbox: the runner in the background (a first call waits for it); the egress socket and relay before this returns, since a program may connect as soon as it runs. */
export async function startCompanions(conn: PodmanConnection, containerId: string, egress: boolean): Promise<void> {
  runnersOf(conn).start(containerId);
  if (egress) await egressOf(conn).startOrFail(containerId);
}

/** Lets both go and waits until they have (so nothing of them races the action that follows). */
export async function letCompanionsGo(conn: PodmanConnection, containerId: string): Promise<void> {
  await Promise.all([runnersOf(conn).forget(containerId), egressOf(conn).forget(containerId)]);
}
