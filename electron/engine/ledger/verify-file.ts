// Verification of a ledger file by a process that does not write to it (`warden audit verify`):
// opened read-only, no key created, no checkpoint signed, so verifying can never paper over tampering.
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { WardenError } from '../../../shared/errors.js';
import type { VerifyResult } from '../../../shared/types/ledger.js';
import { checkpointFileFor } from './checkpoint-file.js';
import { parseVkey, type VerifierKey } from './note.js';
import { defaultKeyDir } from './paths.js';
import { readMeta } from './schema.js';
import { loadVerifier } from './signing.js';
import { verifyLedger, verifyLedgerAsync, type VerifyOptions, type VerifySource } from './verify.js';

export interface VerifyFileOptions extends VerifyOptions {
  keyDir?: string;
  checkpointFile?: string;
  /** Check signatures with this verifier key (name+id+key) instead of the one in keyDir. */
  vkey?: string;
}

export function verifyLedgerFile(file: string, opts: VerifyFileOptions = {}): VerifyResult {
  const src = openForVerify(file, opts);
  try {
    return verifyLedger(src, opts);
  } finally {
    src.db.close();
  }
}

/** verifyLedgerFile() without blocking the event loop (see verifyLedgerAsync). */
export async function verifyLedgerFileAsync(file: string, opts: VerifyFileOptions = {}): Promise<VerifyResult> {
  const src = openForVerify(file, opts);
  try {
    return await verifyLedgerAsync(src, opts);
  } finally {
    src.db.close();
  }
}

function openForVerify(file: string, opts: VerifyFileOptions): VerifySource {
  if (!existsSync(file)) throw new WardenError('E_NOT_FOUND', `no ledger at ${file}`, 'set WARDEN_HOME or pass --ledger FILE');
  let verifier: VerifierKey | null;
  try {
    verifier = opts.vkey ? parseVkey(opts.vkey) : loadVerifier(opts.keyDir ?? defaultKeyDir());
  } catch (err) {
    throw new WardenError('E_BAD_INPUT', `unusable verifier key: ${(err as Error).message}`);
  }
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return { db, file, origin: readMeta(db, 'origin'), verifier, checkpointFile: opts.checkpointFile ?? checkpointFileFor(file) };
  } catch {
    db.close();
    throw new WardenError('E_LEDGER', `${file} is not a Warden ledger`);
  }
}
