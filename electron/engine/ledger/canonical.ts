// The engine's side of entry hashing: the canonical text comes from shared/ledger/jcs.ts (the page
// uses the same encoder), the digest from node:crypto.
import { hash as digest } from 'node:crypto';

export { canonicalize, canonicalizeWithCopy, entryCanonical, GENESIS_HASH, type CanonicalFields } from '../../../shared/ledger/jcs.js';

/** The entry hash: the RFC 6962 leaf hash of the canonical text, as lower-case hex. */
export function entryHash(canonical: string): string {
  // A leading U+0000 encodes to the single byte 0x00 in UTF-8: the leaf prefix, in one digest call.
  return digest('sha256', `\u0000${canonical}`);
}
