// Sandbox names are one Podman namespace shared by every sandbox of the host, whoever owns it, so a
// create learns that a name is taken and nothing else: Podman's own answer names the container that
// holds it (its full id), which must never reach another agent. Names of the warm pool's waiting
// sandboxes are reserved, so no one can probe for them.
import { WardenError } from '../../../shared/errors.js';
import type { PodmanConnection } from './connection.js';

/** Names of sandboxes waiting in the warm pool; a claimed one takes its owner's name. */
export const POOL_NAME_PREFIX = 'warden-pool-';

/** The one answer to a name in use, on every path: no id, no owner, nothing of the other sandbox. */
export function nameTaken(name: string): WardenError {
  return new WardenError(
    'E_CONFLICT',
    `the name ${name} is already in use`,
    'pick another name, or leave the name out and Warden picks one',
  );
}

/** Podman refusing a create or rename because the name is held (500 on create, 409 on rename in Podman 4.3). */
export function isNameConflict(err: unknown): boolean {
  return /already in use/i.test(err instanceof Error ? err.message : String(err));
}

/**
 * Whether a container holds this name now. Podman's exists also matches id prefixes, so a name
 * made of hex digits is confirmed by its inspect.
 */
export async function nameInUse(conn: PodmanConnection, name: string): Promise<boolean> {
  const path = `/containers/${encodeURIComponent(name)}`;
  try {
    await conn.libpod('GET', `${path}/exists`, undefined, `name ${name}`, [204]);
  } catch (err) {
    if (err instanceof WardenError && err.code === 'E_NOT_FOUND') return false;
    throw err;
  }
  if (!/^[0-9a-f]+$/.test(name)) return true;
  const raw = await conn.libpod<{ Name: string }>('GET', `${path}/json`, undefined, `name ${name}`);
  return raw.Name.replace(/^\//, '') === name;
}
