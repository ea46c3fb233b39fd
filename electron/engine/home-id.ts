// The id of one Warden home (WARDEN_HOME): a random id made once and kept in the home. Every sandbox
// carries it in a label, so two homes on one machine (two users' apps, a test home beside the real
// one) never see, count or touch each other's sandboxes, even when their agents share a name.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WardenError } from '../../shared/errors.js';

export const HOME_ID_FILE = 'home-id';
const VALID = /^[0-9a-f]{32}$/;

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** This home's id, made on first use. Two processes starting at once agree: the file appears whole or not at all. */
export function homeId(home: string): string {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const path = join(home, HOME_ID_FILE);
  let id = read(path);
  if (id === null) {
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, `${randomBytes(16).toString('hex')}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, path); // fails if another process made it first: then theirs is the id
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
    id = read(path);
  }
  if (!id || !VALID.test(id)) {
    throw new WardenError(
      'E_INTERNAL',
      `${path} does not hold a Warden home id`,
      "it is written once by Warden and names this home's sandboxes; restore it, or remove it only if this home has no sandboxes",
    );
  }
  return id;
}
