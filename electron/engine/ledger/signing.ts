// The ledger's Ed25519 key: made on first run, private half readable by the owner only, never copied
// into a sandbox or the ledger. Files are created whole (temp file + link) so a crash or two processes
// starting at once can never leave a half-written key or two different keys.
import { generateKeyPairSync, createPrivateKey } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fsyncDir } from './fsync-dir.js';
import { WardenError } from '../../../shared/errors.js';
import { parseVkey, signerFromPrivateKey, type SignerKey, type VerifierKey } from './note.js';

export const PRIVATE_KEY_FILE = 'ledger-ed25519.pem';
export const VERIFIER_KEY_FILE = 'ledger-ed25519.vkey';

export function defaultKeyName(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 48) || 'host';
  return `warden-${host}`;
}

/** Creates `path` with `data` only if it does not exist; returns false when someone else made it first. */
export function createExclusive(path: string, data: string, mode: number): boolean {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(tmp);
    fsyncDir(join(path, '..'));
  }
}

/** Temp files of a process killed between write and link hold a private key nobody uses: remove them. */
function sweepStaleTemps(keyDir: string): void {
  const cutoff = Date.now() - 60_000;
  for (const name of readdirSync(keyDir)) {
    if (!name.startsWith(`${PRIVATE_KEY_FILE}.tmp-`) && !name.startsWith(`${VERIFIER_KEY_FILE}.tmp-`)) continue;
    try {
      if (statSync(join(keyDir, name)).mtimeMs < cutoff) unlinkSync(join(keyDir, name));
    } catch {
      // Raced with its owner; harmless.
    }
  }
}

function readSigner(keyDir: string): SignerKey | null {
  const file = join(keyDir, PRIVATE_KEY_FILE);
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  // Our file, so repair rather than refuse if something loosened its mode.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  let name = defaultKeyName();
  const existing = loadVerifier(keyDir);
  if (existing) name = existing.name;
  try {
    const signer = signerFromPrivateKey(name, createPrivateKey(pem));
    if (existing && !existing.raw.equals(signer.raw)) {
      throw new WardenError(
        'E_LEDGER',
        `${VERIFIER_KEY_FILE} does not match ${PRIVATE_KEY_FILE} in ${keyDir}`,
        'restore the key pair from backup',
      );
    }
    return signer;
  } catch (err) {
    if (err instanceof WardenError) throw err;
    throw new WardenError(
      'E_LEDGER',
      `the ledger key in ${file} is unreadable: ${(err as Error).message}`,
      'restore it from backup; a new key cannot vouch for old checkpoints',
    );
  }
}

/** The signing key in keyDir, made on first use. */
export function loadOrCreateSigner(keyDir: string): SignerKey {
  mkdirSync(keyDir, { recursive: true, mode: 0o700 });
  sweepStaleTemps(keyDir);
  let signer = readSigner(keyDir);
  if (!signer && loadVerifier(keyDir)) {
    // A new key could not vouch for anything signed before: make the loss loud instead.
    throw new WardenError(
      'E_LEDGER',
      `the ledger's private key is missing from ${keyDir} (its public half is there)`,
      `restore ${PRIVATE_KEY_FILE} from backup, or move ${VERIFIER_KEY_FILE} away to start a new key`,
    );
  }
  if (!signer) {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    createExclusive(join(keyDir, PRIVATE_KEY_FILE), pem, 0o600); // false: another process won; use theirs
    signer = readSigner(keyDir)!;
  }
  if (!loadVerifier(keyDir)) createExclusive(join(keyDir, VERIFIER_KEY_FILE), `${signer.vkey}\n`, 0o644);
  return signer;
}

/** The public half only: all that verification needs. */
export function loadVerifier(keyDir: string): VerifierKey | null {
  let text: string;
  try {
    text = readFileSync(join(keyDir, VERIFIER_KEY_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    return parseVkey(text.trim());
  } catch (err) {
    throw new WardenError('E_LEDGER', `${join(keyDir, VERIFIER_KEY_FILE)} is not a verifier key: ${(err as Error).message}`);
  }
}
