// SandboxSpec → libpod SpecGenerator. Pure, so every hardened default is unit-tested.
// The libpod create endpoint is used (not the compat one) because Podman 4.x's compat API
// may ignore HostConfig.Runtime, and libpod takes rlimits, init and no_new_privileges directly.
import type { NetworkMode, SandboxSpec, RuntimeName } from '../../../shared/types/sandbox.js';
import { SANDBOX_DEFAULTS } from '../../../shared/types/sandbox.js';
import { LABEL, LABEL_SCHEMA_VERSION } from './labels.js';
import type { HostLimits } from './host-limits.js';
import { USER_NAMESPACE } from './wall.js';
import { formatOwner, type Owner } from './workspace-lease.js';
import { hostPidsLimit, ociRuntimeArg } from './oci-runtime.js';
import { EGRESS_MOUNT_PATH, EGRESS_PROXY_PORT, RUNNER_MOUNT_PATH } from '../../../shared/contracts/runner.js';

export interface ResolvedSandbox {
  name: string;
  image: string;
  runtime: RuntimeName;
  memoryBytes: number;
  cpus: number;
  pids: number;
  network: NetworkMode;
  workspace: string | null;
  readOnlyRoot: boolean;
  tmpSizeBytes: number | null;
  diskBytes: number;
  expiresAt: string | null;
}

export interface BuildContext {
  name: string;
  image: string;
  runtime: RuntimeName;
  rootless: boolean;
  hostLimits: HostLimits;
  now: Date;
  /** Host path of Warden's seccomp profile (wall.ts); null leaves Podman's default. */
  seccompProfile: string | null;
  /**
   * A user namespace of its own (wall.ts), with the workspace's owner to give it back to
   * (workspace-lease.ts); null when rootless, where the sandbox's root is already the user.
   */
  wall: { workspaceOwner: Owner | null } | null;
  /** Host path of Warden's runner binary (runner/runner-binary.ts), mounted read-only; null or absent: none. */
  runnerBinary?: string | null;
  /** Host directory of an `egress` sandbox's proxy socket (egress/egress-dir.ts), mounted read-only at /.warden/egress. */
  egressDir?: string | null;
}

const CPU_PERIOD_US = 100_000;
/** Wanted ulimits; clamped to the host's hard limits so the container can start. */
const WANT_NOFILE = { soft: 4096, hard: 8192 };
const WANT_NPROC = 8192;

// Without the runner: `exec sleep infinity` keeps PID 2 (under the init) idle; the loop serves images whose sleep lacks "infinity".
export const KEEPALIVE_COMMAND = ['/bin/sh', '-c', 'exec sleep infinity 2>/dev/null || while :; do sleep 86400; done'];

export function resolveSandbox(spec: SandboxSpec, ctx: BuildContext): ResolvedSandbox {
  const readOnlyRoot = spec.readOnlyRoot ?? false;
  return {
    name: ctx.name,
    image: ctx.image,
    runtime: ctx.runtime,
    memoryBytes: spec.memory ?? SANDBOX_DEFAULTS.memoryBytes,
    cpus: spec.cpus ?? SANDBOX_DEFAULTS.cpus,
    pids: spec.pids ?? SANDBOX_DEFAULTS.pids,
    network: spec.network ?? SANDBOX_DEFAULTS.network,
    workspace: spec.workspace ?? null,
    readOnlyRoot,
    tmpSizeBytes: readOnlyRoot ? (spec.tmpSize ?? SANDBOX_DEFAULTS.tmpSizeBytes) : null,
    diskBytes: spec.disk ?? SANDBOX_DEFAULTS.diskBytes,
    expiresAt: spec.ttlSeconds ? new Date(ctx.now.getTime() + spec.ttlSeconds * 1000).toISOString() : null,
  };
}

export function sandboxLabels(r: ResolvedSandbox, extra: Record<string, string> | undefined): Record<string, string> {
  const labels: Record<string, string> = {
    ...extra,
    [LABEL.managed]: 'true',
    [LABEL.version]: LABEL_SCHEMA_VERSION,
    [LABEL.runtime]: r.runtime,
    [LABEL.network]: r.network,
    [LABEL.memory]: String(r.memoryBytes),
    [LABEL.cpus]: String(r.cpus),
    [LABEL.pids]: String(r.pids),
    [LABEL.readOnlyRoot]: String(r.readOnlyRoot),
    [LABEL.disk]: String(r.diskBytes),
  };
  if (r.workspace) labels[LABEL.workspace] = r.workspace;
  if (r.expiresAt) labels[LABEL.expiresAt] = r.expiresAt;
  if (r.tmpSizeBytes !== null) labels[LABEL.tmpSize] = String(r.tmpSizeBytes);
  return labels;
}

/** Explicit ulimits: the engine's defaults exceed what an unprivileged host allows. */
export function sandboxRlimits(host: HostLimits): Array<{ type: string; soft: number; hard: number }> {
  const nofileHard = Math.min(WANT_NOFILE.hard, host.nofileHard);
  const nproc = Math.min(WANT_NPROC, host.nprocHard);
  return [
    { type: 'nofile', soft: Math.min(WANT_NOFILE.soft, nofileHard), hard: nofileHard },
    { type: 'nproc', soft: nproc, hard: nproc },
  ];
}

/**
 * An `egress` sandbox reaches the world only through the relay on its own loopback
 * (resources/runner/relay.c): programs that honour the usual proxy variables find it; the rest
 * have no network at all, since the sandbox has no route anywhere.
 */
export function egressProxyEnv(): Record<string, string> {
  const proxy = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: 'localhost,127.0.0.1',
    no_proxy: 'localhost,127.0.0.1',
  };
}

/**
 * The TCP buffers of a sandbox without its own way out (`none`, `egress`) under runc, in its own
 * network namespace: the most the kernel's autotuning may grow a socket's buffers to. A program
 * that reads fast and then stops leaves its receive buffer full, in the host's TCP memory (which
 * cgroup v1 does not charge to the sandbox); a new namespace here takes the host's maximum (32 MiB
 * a socket on this machine), so a sandbox's connections (its own over loopback, or egress ones the
 * host carries) could pin gigabytes. 1 MiB is far beyond what a loopback hop needs for full speed.
 * `nat` keeps the host's: a long path to the internet needs large windows. (gVisor's sockets live
 * in its own memory, which the sandbox's limit bounds.)
 */
export const SOCKET_BUFFER_SYSCTLS = {
  'net.ipv4.tcp_rmem': '4096 131072 1048576',
  'net.ipv4.tcp_wmem': '4096 16384 1048576',
};

/**
 * At most 128 connections wait on a listener to be accepted (the host's 4096 otherwise), in every
 * mode under runc: the kernel charges a waiting connection's buffers to no cgroup until it is
 * accepted, so this, with socket buffer sizes left to the kernel (the seccomp profile ignores
 * SO_RCVBUF/SO_SNDBUF), is what keeps one listener's waiting connections to ~16 MiB.
 */
export const BACKLOG_SYSCTLS = { 'net.core.somaxconn': '128' };

/** The directory of Warden's mounts in a sandbox (the runner, the egress socket's directory). */
const WARDEN_DIR = '/.warden';

export function buildSpecGenerator(spec: SandboxSpec, r: ResolvedSandbox, ctx: BuildContext): Record<string, unknown> {
  const mounts: Array<Record<string, unknown>> = [];
  if (r.workspace) {
    const options = ['rbind', 'rw', ...(ctx.wall ? ['U'] : [])];
    mounts.push({ destination: '/workspace', source: r.workspace, type: 'bind', options });
  }
  if (ctx.runnerBinary || (r.network === 'egress' && ctx.egressDir)) {
    // /.warden is a small tmpfs of its own, so the mounts in it cannot be moved away: the sandbox's
    // root owns `/` and could rename a plain /.warden, taking the runner's mount with it, and plant
    // a runner of its own at the path Warden starts (stop 24's red team did); a mount point is EBUSY.
    mounts.push({
      destination: WARDEN_DIR,
      type: 'tmpfs',
      source: 'tmpfs',
      options: ['rw', 'nosuid', 'nodev', 'noexec', 'size=64k', 'mode=755'],
    });
  }
  if (ctx.runnerBinary) {
    // Read-only, so agent code beside the runner cannot replace it; started by this absolute path.
    mounts.push({ destination: RUNNER_MOUNT_PATH, source: ctx.runnerBinary, type: 'bind', options: ['bind', 'ro', 'nosuid', 'nodev'] });
  }
  if (r.network === 'egress' && ctx.egressDir) {
    // Its egress socket's directory (egress/egress-dir.ts), read-only: nothing in it can be made,
    // removed or replaced from inside; connecting to the socket needs no write to the mount.
    mounts.push({
      destination: EGRESS_MOUNT_PATH,
      source: ctx.egressDir,
      type: 'bind',
      options: ['bind', 'ro', 'nosuid', 'nodev', 'noexec'],
    });
  }
  if (r.readOnlyRoot) {
    mounts.push({
      destination: '/tmp',
      source: 'tmpfs',
      type: 'tmpfs',
      options: ['rw', 'nosuid', 'nodev', `size=${r.tmpSizeBytes}`],
    });
  }
  return {
    name: r.name,
    hostname: r.name,
    image: r.image,
    // Where Warden's runner is mounted (read-only), it is the keep-alive, in place of any entrypoint the
    // image names: a program in the sandbox's own filesystem (its `sleep`, an image's entrypoint
    // script) is the agent's to replace, and would run at each start before the TCP memory bound is
    // written (red team, stop 24: 3,000 uncharged sockets made in that window).
    // (Set as the entrypoint either way, so an image committed from a sandbox carries no entrypoint of its own.)
    entrypoint: ctx.runnerBinary ? [RUNNER_MOUNT_PATH, 'keep-alive'] : KEEPALIVE_COMMAND,
    command: [],
    env: { HOME: '/root', ...spec.env, ...(r.network === 'egress' ? egressProxyEnv() : {}) },
    // Read by the gVisor wrapper (resources/runtimes/runsc-warden): `egress` needs a working loopback.
    annotations: { 'io.warden.network': r.network },
    labels: {
      ...sandboxLabels(r, spec.labels),
      ...(ctx.wall?.workspaceOwner ? { [LABEL.workspaceOwner]: formatOwner(ctx.wall.workspaceOwner) } : {}),
    },
    oci_runtime: ociRuntimeArg(r.runtime),
    // Hardened defaults; each one is checked in the integration specs through inspect and /proc.
    privileged: false,
    cap_drop: ['ALL'],
    no_new_privileges: true,
    ...(ctx.seccompProfile ? { seccomp_policy: 'default', seccomp_profile_path: ctx.seccompProfile } : {}),
    ...(ctx.wall ? USER_NAMESPACE : {}),
    init: true,
    devices: [],
    read_only_filesystem: r.readOnlyRoot,
    mounts,
    work_dir: '/workspace',
    create_working_dir: true,
    stop_timeout: 2,
    r_limits: sandboxRlimits(ctx.hostLimits),
    resource_limits: {
      // swap equal to the limit: no swap beyond memory, so the OOM killer acts at the limit.
      memory: { limit: r.memoryBytes, swap: r.memoryBytes },
      cpu: { quota: Math.round(r.cpus * CPU_PERIOD_US), period: CPU_PERIOD_US },
      // The label keeps r.pids, the limit the guest is promised; gVisor needs more host processes.
      pids: { limit: hostPidsLimit(r.runtime, r.pids) },
    },
    // `egress` is `none` to the engine: its only way out is the socket in its mounted directory.
    netns: { nsmode: r.network !== 'nat' ? 'none' : ctx.rootless ? 'slirp4netns' : 'bridge' },
    ...(r.runtime === 'runc' || r.runtime === 'crun'
      ? { sysctl: { ...BACKLOG_SYSCTLS, ...(r.network !== 'nat' ? SOCKET_BUFFER_SYSCTLS : {}) } }
      : {}),
  };
}
