// Checks an append request by hand rather than through zod: this runs once per entry on the hot
// path. The rules are the same patterns LedgerAppendSchema uses at the doors.
import { WardenError } from '../../../shared/errors.js';
import {
  LEDGER_ACTOR_PATTERN,
  LEDGER_KIND_PATTERN,
  LEDGER_MAX_PAYLOAD_BYTES,
  LEDGER_SANDBOX_PATTERN,
} from '../../../shared/types/ledger.js';
import { canonicalizeWithCopy } from './canonical.js';

export interface AppendInput {
  actor: string;
  sandboxId?: string | null;
  kind: string;
  payload: unknown;
}

export interface PreparedAppend {
  actor: string;
  sandboxId: string | null;
  kind: string;
  payloadJson: string;
  /** A plain copy of the payload as stored (what JSON.parse(payloadJson) would give). */
  payload: unknown;
}

function bad(message: string): never {
  throw new WardenError('E_BAD_INPUT', message);
}

export function prepareAppend(input: AppendInput): PreparedAppend {
  if (typeof input !== 'object' || input === null) bad('a ledger entry is an object { actor, sandboxId?, kind, payload }');
  const { actor, sandboxId, kind, payload } = input;
  if (typeof actor !== 'string' || !LEDGER_ACTOR_PATTERN.test(actor)) bad('actor must be 1–128 printable characters');
  if (typeof kind !== 'string' || kind.length > 64 || !LEDGER_KIND_PATTERN.test(kind))
    bad(`kind "${String(kind)}" must be dotted lower-case words, e.g. exec.finished`);
  const sandbox = sandboxId ?? null;
  if (sandbox !== null && (typeof sandbox !== 'string' || !LEDGER_SANDBOX_PATTERN.test(sandbox)))
    bad('sandboxId must be a container id or name');
  const { json: payloadJson, copy } = canonicalizeWithCopy(payload === undefined ? null : payload);
  // Three bytes per UTF-16 unit at most: skip the exact count for anything clearly small.
  if (payloadJson.length * 3 > LEDGER_MAX_PAYLOAD_BYTES && Buffer.byteLength(payloadJson) > LEDGER_MAX_PAYLOAD_BYTES) {
    throw new WardenError(
      'E_TOO_LARGE',
      `payload is over ${LEDGER_MAX_PAYLOAD_BYTES} bytes`,
      'store the bytes with storeBlob() and put the digest and size in the payload',
    );
  }
  return { actor, sandboxId: sandbox, kind, payloadJson, payload: copy };
}
