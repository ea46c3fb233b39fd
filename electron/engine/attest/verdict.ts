// The probe's sections → one check per promise, each with the evidence seen. Pure: fed sample
// outputs of runc and gVisor in the unit spec. A promise a tier cannot show the usual way says so
// (skipped, with the reason) rather than passing silently or failing on a missing line.
import type { AttestationCheck } from '../../../shared/types/attestation.js';
import type { NetworkMode } from '../../../shared/types/sandbox.js';
import { parseMountinfo, unexpectedHostMounts } from './mounts.js';
import { hostPidsLimit } from '../podman/oci-runtime.js';

/** What the sandbox promised, and what Warden read on the host. */
export interface AttestExpectations {
  runtime: string;
  rootless: boolean;
  network: NetworkMode;
  readOnlyRoot: boolean;
  memoryBytes: number;
  pids: number;
  workspace: string | null;
  deep: boolean;
  /** null when the engine is not on this host (or the sandbox's cgroup is not readable here). */
  host: { procVersion: string | null; memory: string | null; pids: string | null } | null;
}

export function isGvisor(runtime: string): boolean {
  return /runsc|gvisor/i.test(runtime);
}

const MiB = 1024 * 1024;
const mib = (n: number) => `${Math.round((n / MiB) * 10) / 10} MiB`;
const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const pass = (id: string, promise: string, evidence: string): AttestationCheck => ({ id, promise, ok: true, evidence });
const fail = (id: string, promise: string, evidence: string): AttestationCheck => ({ id, promise, ok: false, evidence });
const skip = (id: string, promise: string, reason: string): AttestationCheck => ({
  id,
  promise,
  ok: true,
  skipped: true,
  evidence: reason,
});

function statusField(status: string, key: string): string | null {
  const line = status.split('\n').find((l) => l.startsWith(`${key}:`));
  return line ? line.slice(key.length + 1).trim() : null;
}

function runtimeCheck(s: Map<string, string>, e: AttestExpectations): AttestationCheck {
  const promise = isGvisor(e.runtime) ? 'runs on gVisor’s kernel, not the host’s' : `runs under ${e.runtime} on the host’s kernel`;
  const inside = (s.get('version') ?? '').split('\n')[0]!.trim();
  const gvisorSays = /starting gvisor/i.test(s.get('dmesg') ?? '');
  const hostVersion = e.host?.procVersion?.trim() ?? null;
  const sameKernel = hostVersion === null ? null : inside === hostVersion;
  const seen = `dmesg ${gvisorSays ? 'says "Starting gVisor"' : 'has no gVisor banner'}; /proc/version ${sameKernel === null ? '(host’s not readable here)' : sameKernel ? 'is the host’s' : 'differs from the host’s'}`;
  if (isGvisor(e.runtime)) return gvisorSays && sameKernel !== true ? pass('runtime', promise, seen) : fail('runtime', promise, seen);
  // A microVM (krun) boots its own guest kernel: the host's would mean no VM at all.
  if (/krun/i.test(e.runtime))
    return sameKernel === false
      ? pass('runtime', 'runs in a microVM with its own kernel', seen)
      : fail('runtime', 'runs in a microVM with its own kernel', seen);
  return !gvisorSays && sameKernel !== false ? pass('runtime', promise, seen) : fail('runtime', promise, seen);
}

function capsCheck(status: string): AttestationCheck {
  const promise = 'no capabilities';
  const fields = ['CapEff', 'CapPrm', 'CapBnd', 'CapInh', 'CapAmb']
    .map((k) => [k, statusField(status, k)] as const)
    .filter(([, v]) => v !== null);
  if (!fields.some(([k]) => k === 'CapEff')) return fail('capabilities', promise, 'no CapEff line in /proc/self/status');
  const nonZero = fields.filter(([, v]) => !/^0+$/.test(v!));
  const seen = fields.map(([k, v]) => `${k}=${v!.replace(/^0+(?=.)/, '')}`).join(' ');
  return nonZero.length ? fail('capabilities', promise, seen) : pass('capabilities', promise, seen);
}

function noNewPrivsCheck(status: string, gvisor: boolean): AttestationCheck {
  const promise = 'no new privileges (setuid binaries gain nothing)';
  const v = statusField(status, 'NoNewPrivs');
  if (v === null && gvisor) return skip('no-new-privileges', promise, 'n/a under gVisor: its /proc/self/status has no NoNewPrivs line');
  return v === '1'
    ? pass('no-new-privileges', promise, 'NoNewPrivs: 1')
    : fail('no-new-privileges', promise, `NoNewPrivs: ${v ?? 'missing'}`);
}

function seccompCheck(status: string, gvisor: boolean): AttestationCheck {
  const promise = 'seccomp filter on (Warden’s profile)';
  const v = statusField(status, 'Seccomp');
  // gVisor reports no filter (or Seccomp: 0) for its guests: their calls go to its own kernel, and
  // runsc filters the host calls that kernel makes; Warden's profile is not what stands there.
  if (gvisor) return skip('seccomp', promise, `n/a under gVisor: system calls go to gVisor’s kernel (Seccomp: ${v ?? 'no line'})`);
  return v === '2' ? pass('seccomp', promise, 'Seccomp: 2 (filter)') : fail('seccomp', promise, `Seccomp: ${v ?? 'missing'}`);
}

function userNsCheck(uidMap: string, e: AttestExpectations): AttestationCheck {
  const promise = 'root inside is not root on the host (own user namespace)';
  if (isGvisor(e.runtime)) return skip('user-namespace', promise, 'n/a under gVisor: the uid map inside is gVisor’s own');
  if (e.rootless) return skip('user-namespace', promise, 'rootless Podman: the sandbox’s root is already an unprivileged user');
  const rows = uidMap
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number))
    .filter((r) => r.length === 3 && r.every(Number.isFinite));
  const seen = `uid_map ${rows.map((r) => r.join(' ')).join(', ') || 'unreadable'}`;
  const identity = rows.some(([inside, outside]) => inside === 0 && outside === 0);
  return rows.length && !identity ? pass('user-namespace', promise, seen) : fail('user-namespace', promise, seen);
}

function networkCheck(netdev: string, network: NetworkMode): AttestationCheck {
  const names = netdev
    .split('\n')
    .filter((l) => l.includes(':') && !l.includes('|'))
    .map((l) => l.split(':')[0]!.trim());
  if (network === 'nat') return pass('network', 'network: nat (outbound through the host)', `interfaces: ${names.join(', ') || 'none'}`);
  const others = names.filter((n) => n !== 'lo');
  const promise =
    network === 'egress' ? 'egress only through Warden: only the loopback interface' : 'no network: only the loopback interface';
  return names.length && !others.length
    ? pass('network', promise, 'interfaces: lo')
    : fail('network', promise, `interfaces: ${names.join(', ') || 'unreadable'}`);
}

function readOnlyCheck(rootwrite: string | undefined, promised: boolean): AttestationCheck {
  const promise = 'read-only root filesystem';
  if (!promised) return skip('read-only-root', promise, 'not asked for: the root is writable by design');
  return /read-only file system/i.test(rootwrite ?? '')
    ? pass('read-only-root', promise, 'a write to / failed: Read-only file system')
    : fail('read-only-root', promise, clip(`a write to / gave: ${rootwrite ?? 'no answer'}`));
}

/** "file value" from the probe's `first` helper → the number, "max" as Infinity, null if none. */
function limitValue(section: string | undefined): { file: string; value: number | null } | null {
  const [file, raw] = (section ?? 'none').trim().split(/\s+/);
  if (!file || file === 'none' || raw === undefined) return null;
  return { file, value: raw === 'max' ? Infinity : Number(raw) };
}

function limitCheck(
  id: string,
  what: string,
  inside: string | undefined,
  host: string | null | undefined,
  promised: number,
  e: AttestExpectations,
  fmt: (n: number) => string,
): AttestationCheck {
  const promise = `${what} limited to ${fmt(promised)}`;
  const seen = limitValue(inside);
  const parts: string[] = [];
  let ok = true;
  const gvisor = isGvisor(e.runtime);
  if (seen && gvisor) {
    // gVisor's cgroup files are its own kernel's: what they say binds nothing; the host's do.
    parts.push(`gVisor’s own cgroup says ${Number.isFinite(seen.value) && seen.value! < 2 ** 50 ? fmt(seen.value!) : 'no limit'}`);
  } else if (seen) {
    parts.push(`sandbox sees ${Number.isFinite(seen.value) ? fmt(seen.value!) : 'no limit'} (${seen.file})`);
    if (seen.value !== promised) ok = false;
  } else if (gvisor) parts.push('no cgroup file inside gVisor');
  else {
    parts.push('no cgroup limit file inside');
    ok = false;
  }
  if (e.host === null) parts.push('host’s cgroup not readable here');
  else if (host === null || host === undefined) {
    parts.push('host’s cgroup file missing');
    ok = false;
  } else {
    const v = host === 'max' ? Infinity : Number(host);
    parts.push(`host’s cgroup says ${Number.isFinite(v) ? fmt(v) : 'no limit'}`);
    // gVisor's guest processes cost more host tasks: its host pids limit is scaled (oci-runtime.ts).
    const expected = id === 'pids-limit' && gvisor ? hostPidsLimit('runsc', promised) : promised;
    if (v !== expected) ok = false;
    if (expected !== promised) parts.push(`(${fmt(expected)} host tasks for ${fmt(promised)} guest processes)`);
  }
  // Under gVisor only the host's word counts: without it nothing is proved.
  if (e.host === null && (!seen || gvisor)) ok = false;
  return { id, promise, ok, evidence: `${parts.join('; ')}; promised ${fmt(promised)}` };
}

function mountsCheck(mountinfo: string, workspace: string | null, network: NetworkMode): AttestationCheck {
  const egress = network === 'egress';
  const what = [...(workspace ? [`the workspace (${workspace})`] : []), ...(egress ? ['the egress socket’s directory (read-only)'] : [])];
  const promise = what.length
    ? `only ${what.join(' and ')} ${what.length > 1 ? 'are' : 'is'} mounted from the host`
    : 'nothing of the host’s files is mounted';
  const entries = parseMountinfo(mountinfo);
  if (!entries.length) return fail('mounts', promise, 'mountinfo unreadable');
  const bad = unexpectedHostMounts(entries, workspace, egress);
  return bad.length
    ? fail('mounts', promise, clip(`host mounts beyond the promise: ${bad.join(', ')}`))
    : pass(
        'mounts',
        promise,
        `${entries.length} mounts, none from the host beyond ${workspace ? '/workspace and ' : ''}${egress ? '/.warden/egress (ro) and ' : ''}Podman’s own files`,
      );
}

function reachCheck(reachable: string): AttestationCheck {
  const found = reachable
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const promise = 'no engine socket or Warden file reachable';
  return found.length
    ? fail('engine-socket', promise, clip(`reachable: ${found.join(', ')}`))
    : pass('engine-socket', promise, 'none of the engine sockets or WARDEN_HOME exists inside');
}

export function plainChecks(s: Map<string, string>, e: AttestExpectations): AttestationCheck[] {
  const status = s.get('status') ?? '';
  const gvisor = isGvisor(e.runtime);
  return [
    runtimeCheck(s, e),
    capsCheck(status),
    noNewPrivsCheck(status, gvisor),
    seccompCheck(status, gvisor),
    userNsCheck(s.get('uid_map') ?? '', e),
    networkCheck(s.get('netdev') ?? '', e.network),
    readOnlyCheck(s.get('rootwrite'), e.readOnlyRoot),
    limitCheck('memory-limit', 'memory', s.get('memory'), e.host?.memory, e.memoryBytes, e, mib),
    limitCheck('pids-limit', 'processes', s.get('pids'), e.host?.pids, e.pids, e, String),
    mountsCheck(s.get('mountinfo') ?? '', e.workspace, e.network),
    reachCheck(s.get('reachable') ?? ''),
  ];
}
