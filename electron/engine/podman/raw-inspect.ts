// What Sandboxes reads off a container's raw libpod inspect beyond its SandboxInfo: where its writable
// layer is (for the disk limit), whether it has the runner mounted, and what to give back on removal.
// Pure functions of the inspect, so sandboxes.ts keeps only the calls to Podman.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { RUNNER_MOUNT_PATH } from '../../../shared/contracts/runner.js';
import { LABEL } from './labels.js';
import type { LibpodInspect } from './sandbox-info.js';
import { hostRange, parseOwner } from './workspace-lease.js';

/** Made by a Warden that mounts its runner (sandboxes made before have none and use the plain path). */
export function hasRunnerMount(raw: LibpodInspect): boolean {
  return (raw.Mounts ?? []).some((m) => m.Destination === RUNNER_MOUNT_PATH);
}

/** containers/storage's directory for the container's writable layer (parent of diff/ and work/). */
export function layerDirOf(raw: LibpodInspect): string | undefined {
  const upper = raw.GraphDriver?.Data?.UpperDir;
  return upper ? dirname(upper) : undefined;
}

/** What to give back after removal: a lent workspace, the sandbox's id ranges and the owner. */
export function workspaceLease(raw: LibpodInspect) {
  const labels = raw.Config.Labels ?? {};
  const dir = labels[LABEL.workspace];
  const owner = parseOwner(labels[LABEL.workspaceOwner]);
  const uids = hostRange(raw.HostConfig.IDMappings?.UidMap);
  const gids = hostRange(raw.HostConfig.IDMappings?.GidMap);
  return dir && existsSync(dir) && owner && uids && gids ? { dir, uids, gids, owner } : null;
}
