// `--deep`: the limits proved by meeting them, in child processes, so the sandbox itself lives on.
// Under gVisor a process or memory limit that is hit ends the whole sandbox, so those two tries are
// skipped there with the reason; the disk is not filled on demand (it would write its whole size).
import type { AttestationCheck } from '../../../shared/types/attestation.js';
import { isGvisor, type AttestExpectations } from './verdict.js';

const MiB = 1024 * 1024;
/** Past the limit by this much, so the try cannot fit by rounding. */
export const ALLOC_MARGIN_BYTES = 64 * MiB;
export const FORK_MARGIN = 32;

const field = (text: string, key: string) =>
  text
    .split('\n')
    .find((l) => l.startsWith(`${key}=`))
    ?.slice(key.length + 1) ?? null;
const rest = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() && !/^[a-z]+=/.test(l))
    .join(' ')
    .trim()
    .slice(0, 160);

/** The fork and memory tries are skipped under gVisor: hitting them there ends the sandbox. */
export function deepTries(e: AttestExpectations): { forkTries: number; allocateBytes: number | null } {
  const gvisor = isGvisor(e.runtime);
  return { forkTries: gvisor ? 0 : e.pids + FORK_MARGIN, allocateBytes: gvisor ? null : e.memoryBytes + ALLOC_MARGIN_BYTES };
}

function pidsTry(text: string | undefined, e: AttestExpectations): AttestationCheck {
  const id = 'deep.pids';
  const promise = `a fork past ${e.pids} processes is refused`;
  if (isGvisor(e.runtime))
    return { id, promise, ok: true, skipped: true, evidence: 'not tried under gVisor: meeting the pids limit ends the whole sandbox' };
  const t = text ?? '';
  const started = Number(field(t, 'started') ?? NaN);
  const refused = /cannot fork|resource temporarily unavailable/i.test(t);
  const evidence = refused
    ? `fork refused after ${started} more processes: ${rest(t)}; all killed again`
    : `started ${Number.isFinite(started) ? started : '?'} processes with no refusal`;
  return { id, promise, ok: refused && started < e.pids + FORK_MARGIN, evidence };
}

function memoryTry(text: string | undefined, e: AttestExpectations): AttestationCheck {
  const id = 'deep.memory';
  const bytes = e.memoryBytes + ALLOC_MARGIN_BYTES;
  const promise = `allocating past ${Math.round(e.memoryBytes / MiB)} MiB fails`;
  const t = text ?? '';
  if (isGvisor(e.runtime) || /no-try/.test(t))
    return { id, promise, ok: true, skipped: true, evidence: 'not tried under gVisor: meeting the memory limit ends the whole sandbox' };
  if (/no-allocator/.test(t))
    return { id, promise, ok: true, skipped: true, evidence: 'not tried: the image has neither python3 nor perl to allocate with' };
  const exit = Number(field(t, 'exit'));
  const how = field(t, 'with') ?? '?';
  const refused = exit === 137 || /MemoryError|Out of memory/i.test(t);
  const evidence = refused
    ? `${how} filling ${Math.round(bytes / MiB)} MiB in a child: ${exit === 137 ? 'killed by the OOM killer (exit 137)' : rest(t)}`
    : `${how} filled ${Math.round(bytes / MiB)} MiB (exit ${exit})`;
  return { id, promise, ok: refused, evidence };
}

function usernsTry(text: string | undefined, e: AttestExpectations): AttestationCheck {
  const id = 'deep.userns';
  const promise = 'a new user namespace is refused';
  const t = text ?? '';
  // gVisor's namespaces are its own kernel's, as in a VM: opening one reaches nothing of the host.
  if (isGvisor(e.runtime))
    return {
      id,
      promise,
      ok: true,
      skipped: true,
      evidence: `n/a under gVisor: a namespace there is its own kernel’s (unshare -U ${/exit=0/.test(t) ? 'succeeded' : 'was refused'})`,
    };
  if (/no-unshare/.test(t)) return { id, promise, ok: true, skipped: true, evidence: 'not tried: no unshare in the image' };
  const exit = Number(field(t, 'exit'));
  return exit !== 0 && Number.isFinite(exit)
    ? { id, promise, ok: true, evidence: `unshare -U: ${rest(t) || `exit ${exit}`}` }
    : { id, promise, ok: false, evidence: 'unshare -U succeeded' };
}

function cgroupWriteTry(text: string | undefined, e: AttestExpectations): AttestationCheck {
  const id = 'deep.cgroup-write';
  const promise = 'the cgroup limit files cannot be written';
  const lines = (text ?? '').split('\n').filter((l) => l.startsWith('/'));
  // gVisor's cgroup files are its own kernel's: a write there moves nothing on the host, whose
  // limits the plain checks read.
  if (isGvisor(e.runtime))
    return {
      id,
      promise,
      ok: true,
      skipped: true,
      evidence: 'n/a under gVisor: the cgroup files inside are its own kernel’s; the host’s limits are checked above',
    };
  if (!lines.length) {
    return isGvisor(e.runtime)
      ? { id, promise, ok: true, skipped: true, evidence: 'no cgroup limit files inside gVisor' }
      : { id, promise, ok: false, evidence: 'no cgroup limit files found to try' };
  }
  const written = lines.filter((l) => / written$/.test(l)).map((l) => l.split(' ')[0]);
  if (written.length && isGvisor(e.runtime)) {
    return {
      id,
      promise,
      ok: true,
      skipped: true,
      evidence: `the files inside are gVisor’s own (${written.length} accepted a write); the host’s limits are checked above`,
    };
  }
  if (written.length) return { id, promise, ok: false, evidence: `writable (own value written back): ${written.join(', ')}` };
  const why = lines[0]!.replace(/^.*refused: (.*?:)*\s*/, '');
  return { id, promise, ok: true, evidence: `${lines.length} limit files refused a write (${why})` };
}

export function deepChecks(s: Map<string, string>, e: AttestExpectations): AttestationCheck[] {
  return [
    pidsTry(s.get('deep.pids'), e),
    memoryTry(s.get('deep.memory'), e),
    usernsTry(s.get('deep.userns'), e),
    cgroupWriteTry(s.get('deep.cgroup'), e),
    // Filling the disk would write the whole limit (4 GiB by default) into the sandbox: not done on
    // demand. electron/engine/podman/disk-limit.int.spec.ts fills one to prove the limit.
    {
      id: 'deep.disk',
      promise: 'writes stop at the disk limit',
      ok: true,
      skipped: true,
      evidence: 'not tried: filling the disk would write its whole size',
    },
  ];
}
