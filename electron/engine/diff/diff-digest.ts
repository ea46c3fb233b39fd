// The digest that binds a workspace diff shown to a person into the ledger: SHA-256 of the diff in
// canonical JSON (RFC 8785, the form ledger entries are hashed in), so whoever holds the answer can
// recompute it from the JSON alone, whatever door it came through.
import { createHash } from 'node:crypto';
import type { WorkspaceDiff } from '../../../shared/types/diff.js';
import { canonicalize } from '../ledger/canonical.js';

export function diffDigest(diff: WorkspaceDiff): string {
  return createHash('sha256').update(canonicalize(diff), 'utf8').digest('hex');
}
