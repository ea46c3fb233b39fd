// Canonical encoding of ledger entries: RFC 8785 JSON Canonicalization Scheme (JCS). In shared/ so
// the engine (which hashes entries when it appends them) and the Ledger view (which recomputes an
// entry's leaf hash to check its inclusion proof in the page) encode the very same bytes.
//
// Why JCS rather than a binary layout: an auditor can rebuild the exact hashed bytes from the JSON
// bundle with any JSON library plus a key sort, and the payload (already JSON) needs no second
// encoding. The entry hash is the RFC 6962 leaf hash of those bytes, so one SHA-256 per entry serves
// both the hash chain and the Merkle tree:
//
//   hash = SHA-256(0x00 ‖ UTF-8(JCS({actor, kind, payload, prev_hash, sandbox_id, seq, time})))
import { WardenError } from '../errors.js';

/** prev_hash of entry 1. */
export const GENESIS_HASH = '0'.repeat(64);

const MAX_DEPTH = 64;
// With the u flag, \p{Cs} matches only unpaired surrogates: JCS (I-JSON) forbids them, and SQLite
// would silently turn them into U+FFFD, so the stored text would no longer hash to the entry hash.
const LONE_SURROGATE = /\p{Cs}/u;

function bad(message: string): never {
  throw new WardenError(
    'E_BAD_INPUT',
    message,
    'ledger payloads must be plain JSON: objects, arrays, strings, finite numbers, booleans, null',
  );
}

function str(value: string): string {
  if (LONE_SURROGATE.test(value)) bad('payload holds a string with an unpaired UTF-16 surrogate');
  // JSON.stringify escapes exactly as RFC 8785 §3.2.2.2 asks: \b \t \n \f \r, other controls as
  // lower-case \u00xx, " and \\; everything else is emitted as is.
  return JSON.stringify(value);
}

function num(value: number): string {
  if (!Number.isFinite(value)) bad(`payload holds a number JSON cannot represent (${String(value)})`);
  // ECMAScript Number-to-String is what RFC 8785 §3.2.2.3 specifies; -0 becomes "0".
  return JSON.stringify(value);
}

function encode(value: unknown, depth: number): string {
  if (depth > MAX_DEPTH) bad(`payload nests deeper than ${MAX_DEPTH} levels (or holds a cycle)`);
  switch (typeof value) {
    case 'string':
      return str(value);
    case 'number':
      return num(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (item === undefined || typeof item === 'function' || typeof item === 'symbol')
            bad('payload array holds undefined, a function or a symbol');
          out += (i ? ',' : '') + encode(item, depth + 1);
        }
        return `${out}]`;
      }
      const withJson = value as { toJSON?: () => unknown };
      if (typeof withJson.toJSON === 'function') return encode(withJson.toJSON(), depth + 1);
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null)
        bad(`payload holds a ${value.constructor?.name ?? 'non-plain'} object; convert it to plain JSON`);
      // Default sort compares UTF-16 code units, which is the order RFC 8785 §3.2.3 prescribes.
      const keys = Object.keys(value).sort();
      let out = '{';
      let first = true;
      for (const key of keys) {
        const item = (value as Record<string, unknown>)[key];
        // Like JSON.stringify: members whose value is undefined are left out.
        if (item === undefined) continue;
        if (typeof item === 'function' || typeof item === 'symbol') bad(`payload member "${key}" is a function or a symbol`);
        out += `${first ? '' : ','}${str(key)}:${encode(item, depth + 1)}`;
        first = false;
      }
      return `${out}}`;
    }
    default:
      return bad(`payload holds a ${typeof value}, which JSON cannot represent`);
  }
}

/** RFC 8785 canonical JSON text of a value; throws E_BAD_INPUT for anything outside I-JSON. */
export function canonicalize(value: unknown): string {
  return canonicalizeWithCopy(value).json;
}

// Array-index keys ("0", "7", "10") are ordered numerically by JavaScript objects whatever the
// insertion order, so a copy holding two of them may not stringify in code-unit order.
const INDEX_KEY = /^(?:0|[1-9][0-9]{0,9})$/;
// A \ud800–\udfff escape preceded by an even number of backslashes (so not itself escaped text).
const ESCAPED_SURROGATE = /(?:^|[^\\])(?:\\\\)*\\ud[89a-f]/;

interface Normalized {
  copy: unknown;
  /** JSON.stringify of the copy is not canonical (index-like keys): use the explicit encoder. */
  slow: boolean;
}

/**
 * A plain-data copy of the value with every object's keys inserted in canonical order, validated on
 * the way (finite numbers, well-formed strings, plain objects, no cycles).
 */
function normalize(value: unknown, depth: number, state: Normalized): unknown {
  if (depth > MAX_DEPTH) bad(`payload nests deeper than ${MAX_DEPTH} levels (or holds a cycle)`);
  switch (typeof value) {
    case 'string':
      return value; // unpaired surrogates are caught once, in the finished text
    case 'number':
      if (!Number.isFinite(value)) bad(`payload holds a number JSON cannot represent (${String(value)})`);
      return value === 0 ? 0 : value; // -0 is "0" in JSON
    case 'boolean':
      return value;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) {
        const out = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (item === undefined || typeof item === 'function' || typeof item === 'symbol')
            bad('payload array holds undefined, a function or a symbol');
          out[i] = normalize(item, depth + 1, state);
        }
        return out;
      }
      const withJson = value as { toJSON?: () => unknown };
      if (typeof withJson.toJSON === 'function') return normalize(withJson.toJSON(), depth + 1, state);
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null)
        bad(
          `payload holds a ${(value as { constructor?: { name?: string } }).constructor?.name ?? 'non-plain'} object; convert it to plain JSON`,
        );
      // Default sort compares UTF-16 code units, which is the order RFC 8785 §3.2.3 prescribes.
      const keys = Object.keys(value).sort();
      const out: Record<string, unknown> = {};
      let indexKeys = 0;
      for (const key of keys) {
        const item = (value as Record<string, unknown>)[key];
        // Like JSON.stringify: members whose value is undefined are left out.
        if (item === undefined) continue;
        if (typeof item === 'function' || typeof item === 'symbol') bad(`payload member "${key}" is a function or a symbol`);
        const c = key.charCodeAt(0);
        if (c >= 48 && c <= 57 && INDEX_KEY.test(key) && ++indexKeys > 1) state.slow = true;
        const v = normalize(item, depth + 1, state);
        if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
        else out[key] = v;
      }
      return out;
    }
    default:
      return bad(`payload holds a ${typeof value}, which JSON cannot represent`);
  }
}

/**
 * The canonical text and a plain copy of the value it encodes (what JSON.parse of the text gives).
 * JSON.stringify already writes numbers (ECMAScript Number::toString) and well-formed strings exactly
 * as RFC 8785 asks; with keys inserted in code-unit order it writes the whole canonical form, natively.
 */
export function canonicalizeWithCopy(value: unknown): { json: string; copy: unknown } {
  const state: Normalized = { copy: undefined, slow: false };
  const copy = normalize(value, 0, state);
  const json = state.slow ? encode(copy, 0) : JSON.stringify(copy);
  // Well-formed JSON.stringify writes an unpaired surrogate as a \udxxx escape, and never otherwise
  // (other characters are written as themselves): one scan of the text finds any of them.
  if (json.includes('\\u') && ESCAPED_SURROGATE.test(json)) bad('payload holds a string with an unpaired UTF-16 surrogate');
  return { json, copy };
}

export interface CanonicalFields {
  seq: number;
  time: string;
  actor: string;
  sandboxId: string | null;
  kind: string;
  /** The payload's canonical JSON text (as stored). */
  payloadJson: string;
  prevHash: string;
}

/**
 * JCS text of an entry without its hash, built by concatenation because the member names are fixed
 * and already in canonical order (actor < kind < payload < prev_hash < sandbox_id < seq < time).
 * Equal to canonicalize() of the same object; a test holds the two together.
 */
export function entryCanonical(f: CanonicalFields): string {
  return (
    `{"actor":${JSON.stringify(f.actor)},"kind":${JSON.stringify(f.kind)},"payload":${f.payloadJson}` +
    `,"prev_hash":"${f.prevHash}","sandbox_id":${f.sandboxId === null ? 'null' : JSON.stringify(f.sandboxId)}` +
    `,"seq":${f.seq},"time":${JSON.stringify(f.time)}}`
  );
}
