// What Warden keeps running inside a sandbox beside the agent's own processes: its runner (the fast
// path for calls) and, in an `egress` sandbox, its egress socket served by this process and the relay
// that is its only way out. Both are let go on purpose before a stop, pause, restart or removal (not
// a loss) and started again after.
import type { PodmanConnection } from './connection.js';
import { runnersOf } from '../runner/runner-registry.js';
import { egressOf } from '../egress/egress-registry.js';
import { LABEL } from './labels.js';
import type { LibpodInspect } from './sandbox-info.js';
import { boundTcpMemory } from './tcp-memory.js';
import { runtimeFromInspect } from './oci-runtime.js';
import { sealPodmanFiles } from './podman-files.js';

/**
 * What a sandbox Warden just started (or restarted: a new cgroup) gets before the agent's first call:
 * its TCP memory bound (tcp-memory.ts), Podman's host files read-only under runc (podman-files.ts;
 * `hostRunner` is the runner binary on the host), then, where it has Warden's runner mounted, its companions.
 */
export async function settleStarted(
  conn: PodmanConnection,
  started: LibpodInspect,
  withRunner: boolean,
  hostRunner: string | null,
): Promise<void> {
  boundTcpMemory(started.State.Pid);
  if (hostRunner && runtimeFromInspect(started.OCIRuntime) === 'runc') {
    const sealed = sealPodmanFiles(hostRunner, started.State.Pid);
    if (!sealed.ok) process.stderr.write(`warden: Podman's files in sandbox ${started.Name} stay writable: ${sealed.why}\n`);
  }
  if (withRunner) await startCompanions(conn, started.Id, started.Config.Labels?.[LABEL.network] === 'egress');
}

/** Starts them in a started sandbox: the runner in the background (a first call waits for it); the egress socket and relay before this returns, since a program may connect as soon as it runs. */
export async function startCompanions(conn: PodmanConnection, containerId: string, egress: boolean): Promise<void> {
  runnersOf(conn).start(containerId);
  if (egress) await egressOf(conn).startOrFail(containerId);
}

/** Lets both go and waits until they have (so nothing of them races the action that follows). */
export async function letCompanionsGo(conn: PodmanConnection, containerId: string): Promise<void> {
  await Promise.all([runnersOf(conn).forget(containerId), egressOf(conn).forget(containerId)]);
}
