// The baseline several benches time Warden against: the podman CLI, as a person runs it on this host
// (without CONTAINER_HOST, so it talks to the local service), and the exec round trip of `true` timed
// both ways in one loop. Written once so every bench measures its baseline the same way.
import { spawnSync } from 'node:child_process';
import type { PodmanConnection } from '../electron/engine/podman/connection.js';
import { runExec } from '../electron/engine/podman/exec-session.js';

/** The environment the CLI runs in: this process's, without CONTAINER_HOST. */
export const cliEnv: NodeJS.ProcessEnv = { ...process.env };
delete cliEnv.CONTAINER_HOST;

/** Milliseconds one `podman …` took; a failed command stops the bench. */
export function timeCli(args: string[]): number {
  const started = performance.now();
  const r = spawnSync('podman', args, { env: cliEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`podman ${args.join(' ')} failed: ${r.stderr.toString()}`);
  return ms;
}

/** `true` run `runs` times in the sandbox, through Warden's exec and through `podman exec` in turn: milliseconds each. */
export async function timeExecTrue(
  conn: PodmanConnection,
  sb: { id: string; name: string },
  runs: number,
): Promise<{ ours: number[]; base: number[] }> {
  const ours: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await runExec(conn, sb.id, { cmd: ['true'] });
    ours.push(performance.now() - started);
    base.push(timeCli(['exec', sb.name, 'true']));
  }
  return { ours, base };
}
