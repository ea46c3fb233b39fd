// "Only the workspace is mounted from the host": judged from /proc/self/mountinfo. A mount is from
// the host when its filesystem is not one the kernel (or gVisor) makes for the sandbox alone; those
// allowed are Podman's own small files, its init, device nodes, the root image, the workspace, and
// in an `egress` sandbox only, its proxy socket's directory, read-only.
import { EGRESS_MOUNT_PATH } from '../../../shared/contracts/runner.js';
import { PODMAN_FILES } from '../podman/podman-files.js';

/** Filesystems that hold nothing of the host's files. */
const VIRTUAL_FS = new Set([
  'proc',
  'sysfs',
  'tmpfs',
  'devpts',
  'mqueue',
  'cgroup',
  'cgroup2',
  'nsfs',
  'securityfs',
  'hugetlbfs',
  'debugfs',
  'tracefs',
  'bpf',
  'binfmt_misc',
  'fusectl',
  'pstore',
  'configfs',
]);

/** Files Podman puts in every container (read-only under runc once started: podman-files.ts), and its init (read-only). */
const PODMAN_MOUNTED = new Set<string>([...PODMAN_FILES, '/run/podman-init', '/dev/init']);

/** Warden's runner binary, bind-mounted read-only from the host into every sandbox (runner/runner-binary.ts). */
const RUNNER_FILE = '/.warden/runner';

/** The container's own shm (Podman's per-container tmpfs; gVisor shows it as a 9p share). */
const CONTAINER_SHM = '/dev/shm';

export interface MountEntry {
  mountPoint: string;
  /** The mount's own options (rw or ro first). */
  options: string;
  root: string;
  fsType: string;
  source: string;
}

/** mountinfo lines: "id parent maj:min root mountpoint opts [optional…] - fstype source superopts". */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const f = left.split(' ');
    const [fsType, source] = right.split(' ');
    if (f.length < 5 || !fsType) continue;
    out.push({ root: unescape(f[3]!), mountPoint: unescape(f[4]!), options: f[5] ?? '', fsType, source: source ?? '' });
  }
  return out;
}

function unescape(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** Host-backed mounts beyond what a sandbox is allowed; empty when the promise holds. */
export function unexpectedHostMounts(entries: MountEntry[], workspace: string | null, egress = false): string[] {
  const bad: string[] = [];
  for (const m of entries) {
    if (VIRTUAL_FS.has(m.fsType) || m.mountPoint === '/') continue;
    if (PODMAN_MOUNTED.has(m.mountPoint) || m.mountPoint === CONTAINER_SHM || m.mountPoint === RUNNER_FILE) continue;
    // Device nodes Podman binds from the host's devtmpfs, and /dev/null over masked /proc files.
    if (m.fsType === 'devtmpfs' && (m.mountPoint === '/dev' || m.mountPoint.startsWith('/dev/') || m.mountPoint.startsWith('/proc/')))
      continue;
    if (workspace && (m.mountPoint === '/workspace' || m.mountPoint.startsWith('/workspace/'))) continue;
    const readOnly = m.options.split(',').includes('ro');
    if (egress && m.mountPoint === EGRESS_MOUNT_PATH && readOnly) continue;
    if (m.mountPoint === EGRESS_MOUNT_PATH && egress) {
      bad.push(`${m.mountPoint} (${m.fsType}, writable)`);
      continue;
    }
    bad.push(`${m.mountPoint} (${m.fsType}${m.root !== '/' ? ` ${m.root}` : ''})`);
  }
  return bad;
}
