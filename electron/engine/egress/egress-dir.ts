// One host directory per `egress` sandbox, holding nothing but the Unix socket Warden's egress proxy
// listens on for it. It is bind-mounted read-only at /.warden/egress (the directory, not the socket,
// so a Warden process that starts later can listen on the same path and the sandbox sees the new
// socket). Which socket a connection reached is how the proxy knows the sandbox: nothing the sandbox
// says counts. Under WARDEN_HOME/egress, 0711: searched, never listed, by others (gVisor's gofer
// runs in the sandbox's user namespace and must reach its mount source; WARDEN_HOME itself keeps
// other host users out). Each directory 0755 and its socket 0666, because under `--userns=auto` the
// sandbox's root is an unprivileged host uid that must search the one and connect to the other.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EGRESS_MOUNT_PATH, EGRESS_SOCKET_NAME } from '../../../shared/contracts/runner.js';
import { WardenError } from '../../../shared/errors.js';
import type { LibpodInspect } from '../podman/sandbox-info.js';

const ROOT_NAME = 'egress';
const KEY = /^[0-9a-f]{16}$/;
/** sun_path holds 108 bytes with its NUL. */
const MAX_SOCKET_PATH = 107;

export function socketPathOf(dir: string): string {
  return join(dir, EGRESS_SOCKET_NAME);
}

/** A directory this module made: WARDEN_HOME/egress/<16 hex>. */
export function isEgressDir(path: string): boolean {
  return KEY.test(basename(path)) && basename(dirname(path)) === ROOT_NAME;
}

/** Makes a new sandbox's directory (before its create, which mounts it). */
export function makeEgressDir(home: string): string {
  const root = join(home, ROOT_NAME);
  mkdirSync(root, { recursive: true, mode: 0o711 });
  chmodSync(root, 0o711);
  const dir = join(root, randomBytes(8).toString('hex'));
  if (Buffer.byteLength(socketPathOf(dir)) > MAX_SOCKET_PATH)
    throw new WardenError(
      'E_BAD_INPUT',
      `network egress needs a Unix socket under WARDEN_HOME, and ${socketPathOf(dir)} is longer than the ${MAX_SOCKET_PATH} bytes a socket path may have`,
      'use a WARDEN_HOME with a shorter path',
    );
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755); // whatever the umask
  return dir;
}

export function removeEgressDir(dir: string | null): void {
  if (dir && isEgressDir(dir)) rmSync(dir, { recursive: true, force: true });
}

/** The directory a sandbox has mounted at /.warden/egress, as Podman says (null: none, or not one of these). */
export function egressDirOf(raw: Pick<LibpodInspect, 'Mounts'>): string | null {
  const source = (raw.Mounts ?? []).find((m) => m.Destination === EGRESS_MOUNT_PATH)?.Source;
  return source && isEgressDir(source) ? source : null;
}
