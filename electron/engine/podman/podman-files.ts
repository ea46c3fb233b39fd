// The files Podman bind-mounts into every container from its own storage on the host (/etc/hosts,
// /etc/hostname, /etc/resolv.conf, /run/.containerenv) are made read-only in a runc sandbox after
// each start, by the runner binary's seal-files mode (resources/runner/seal.c, which says why): a
// write to them lands on the host's disk, past the sandbox's disk limit. Under gVisor the files are
// served by its gofer and the first process is gVisor's own, so this does not reach them (README).
import { spawnSync } from 'node:child_process';

export const PODMAN_FILES = ['/etc/hosts', '/etc/hostname', '/etc/resolv.conf', '/run/.containerenv'] as const;

export type SealResult = { ok: true; sealed: string[] } | { ok: false; why: string };

/** Remounts them read-only in the mount namespace of `pid` (the sandbox's first process). */
export function sealPodmanFiles(runner: string, pid: number): SealResult {
  if (!Number.isInteger(pid) || pid <= 0) return { ok: false, why: 'the sandbox has no running process' };
  const r = spawnSync(runner, ['seal-files', String(pid)], { encoding: 'utf8', timeout: 10_000 });
  const lines = (r.stdout ?? '').trim().split('\n').filter(Boolean);
  const errors = lines.filter((l) => l.startsWith('error '));
  if (r.status !== 0 || errors.length)
    return { ok: false, why: errors.map((l) => l.slice(6)).join('; ') || `exit ${r.status ?? r.signal}` };
  return { ok: true, sealed: lines.filter((l) => l.startsWith('sealed ')).map((l) => l.slice(7)) };
}
