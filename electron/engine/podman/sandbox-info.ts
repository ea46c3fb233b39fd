// Podman's view of a container (list entry or inspect) → SandboxInfo. Podman is the truth;
// Warden keeps no second copy of state, only what it wrote in labels.
import type { SandboxInfo, SandboxState, NetworkMode } from '../../../shared/types/sandbox.js';
import { NETWORK_MODES } from '../../../shared/types/sandbox.js';
import { LABEL, userLabels } from './labels.js';
import { runtimeFromInspect } from './oci-runtime.js';
import { exitReason } from './exit-reason.js';

export interface LibpodListEntry {
  Id: string;
  Names: string[];
  Image: string;
  State: string;
  Labels: Record<string, string> | null;
  Created: string | number;
  StartedAt: number;
  ExitCode: number;
  Exited: boolean;
}

export interface LibpodInspect {
  Id: string;
  Name: string;
  Created: string;
  ImageName: string;
  /** The id of the image it was made from. */
  Image: string;
  OCIRuntime: string;
  State: { Status: string; OOMKilled: boolean; ExitCode: number; StartedAt: string; Pid: number };
  Config: { Labels: Record<string, string> | null };
  GraphDriver?: { Name: string; Data?: { UpperDir?: string } };
  Mounts?: Array<{ Destination?: string; Source?: string }>;
  HostConfig: {
    Memory: number;
    NanoCpus: number;
    CpuQuota: number;
    CpuPeriod: number;
    PidsLimit: number;
    ReadonlyRootfs: boolean;
    /** "container:host:size" ranges of the sandbox's user namespace, when it has one. */
    IDMappings?: { UidMap?: string[]; GidMap?: string[] };
  };
}

const STATE_MAP: Record<string, SandboxState> = {
  created: 'created',
  configured: 'created',
  initialized: 'created',
  running: 'running',
  stopping: 'running',
  paused: 'paused',
  restarting: 'restarting',
  exited: 'exited',
  stopped: 'exited',
  removing: 'removing',
  dead: 'dead',
};

export function mapState(podmanState: string): SandboxState {
  return STATE_MAP[podmanState.toLowerCase()] ?? 'unknown';
}

function isoOrNull(value: string | number | undefined): string | null {
  if (value === undefined || value === null || value === '' || value === 0) return null;
  const date = typeof value === 'number' ? new Date(value * 1000) : new Date(value);
  // Podman reports "never started" as year 1.
  return Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1971 ? null : date.toISOString();
}

function fromLabels(labels: Record<string, string>) {
  const num = (key: string, fallback: number) => {
    const v = Number(labels[key]);
    return Number.isFinite(v) && labels[key] !== undefined ? v : fallback;
  };
  const tmp = labels[LABEL.tmpSize];
  const disk = labels[LABEL.disk];
  return {
    runtime: labels[LABEL.runtime] ?? 'unknown',
    network: ((NETWORK_MODES as readonly string[]).includes(labels[LABEL.network] ?? '') ? labels[LABEL.network] : 'none') as NetworkMode,
    // Empty: blanked on a sandbox made from a snapshot of one with a host workspace (snapshot/).
    workspace: labels[LABEL.workspace] || null,
    expiresAt: labels[LABEL.expiresAt] ?? null,
    limits: {
      memoryBytes: num(LABEL.memory, 0),
      cpus: num(LABEL.cpus, 0),
      pids: num(LABEL.pids, 0),
      readOnlyRoot: labels[LABEL.readOnlyRoot] === 'true',
      tmpSizeBytes: tmp === undefined ? null : Number(tmp),
      diskBytes: disk === undefined ? null : Number(disk),
      // Only the host can tell (Sandboxes checks its disk image); never claimed from a label.
      diskEnforced: false,
    },
  };
}

export function infoFromListEntry(e: LibpodListEntry): SandboxInfo {
  const labels = e.Labels ?? {};
  const state = mapState(e.State);
  return {
    id: e.Id,
    name: (e.Names[0] ?? e.Id.slice(0, 12)).replace(/^\//, ''),
    image: e.Image,
    state,
    ...fromLabels(labels),
    createdAt: isoOrNull(e.Created) ?? new Date(0).toISOString(),
    startedAt: state === 'running' || state === 'paused' ? isoOrNull(e.StartedAt) : null,
    labels: userLabels(labels),
    ...(labels[LABEL.home] === undefined ? { legacy: true } : {}),
    exitCode: e.Exited ? e.ExitCode : null,
    oomKilled: false,
    exitReason: e.Exited ? exitReason(labels[LABEL.runtime] ?? '', e.ExitCode, false) : null,
  };
}

export function infoFromInspect(i: LibpodInspect): SandboxInfo {
  const labels = i.Config.Labels ?? {};
  const state = mapState(i.State.Status);
  const base = fromLabels(labels);
  const runtime = runtimeFromInspect(i.OCIRuntime) || base.runtime;
  const exitCode = state === 'exited' || state === 'dead' ? i.State.ExitCode : null;
  return {
    id: i.Id,
    name: i.Name.replace(/^\//, ''),
    image: i.ImageName,
    state,
    ...base,
    // inspect names the runtime actually in use; the label only says what was asked for.
    runtime,
    createdAt: isoOrNull(i.Created) ?? new Date(0).toISOString(),
    startedAt: state === 'running' || state === 'paused' ? isoOrNull(i.State.StartedAt) : null,
    labels: userLabels(labels),
    ...(labels[LABEL.home] === undefined ? { legacy: true } : {}),
    exitCode,
    oomKilled: i.State.OOMKilled,
    exitReason: exitCode === null ? null : exitReason(runtime, exitCode, i.State.OOMKilled),
  };
}
