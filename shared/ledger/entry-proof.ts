// Checks one ledger entry's inclusion proof the way an outsider would, trusting nothing the server
// sent: recompute the entry's leaf hash from its fields (RFC 8785 + RFC 6962), check the checkpoint's
// Ed25519 signature with the ledger's key, walk the audit path to a root and compare it with the root
// the checkpoint signed. The Ledger view runs this in the page with WebCrypto; the unit specs run it
// with Node's. Crypto is injected: shared/ imports none.
import type { LedgerEntry } from '../types/ledger.js';
import { LedgerProofSchema, type CheckedCheckpoint, type ProofFailure, type ProofVerdict } from '../types/ledger-proof.js';
import { canonicalize } from './jcs.js';
import { bytesEqual, fromHex, inclusionRootAsync, inclusionSides, leafInput, toHex, type Bytes } from './rfc6962.js';
import { keyIdInput, NoteFormatError, parseCheckpointText, parseNote, parseVkey, spkiPem, utf8 } from './signed-note.js';

export interface ProofCrypto {
  sha256(data: Bytes): Promise<Bytes>;
  /** Ed25519 verification; throws (not false) when this runtime cannot do Ed25519 at all. */
  ed25519Verify(publicKey: Bytes, signature: Bytes, message: Bytes): Promise<boolean>;
}

export interface ProofCheckOptions {
  /** The entry the person is looking at: the proof must be for exactly that content. */
  shown?: LedgerEntry;
  /** A key fingerprint trusted before (pinned, or obtained out of band): any other key fails. */
  trustedFingerprint?: string;
}

/** The canonical text an entry's hash is over, or null if its fields cannot be canonical JSON. */
export function entryCanonicalText(e: LedgerEntry): string | null {
  try {
    return canonicalize({
      actor: e.actor,
      kind: e.kind,
      payload: e.payload,
      prev_hash: e.prevHash,
      sandbox_id: e.sandboxId,
      seq: e.seq,
      time: e.time,
    });
  } catch {
    return null;
  }
}

const short = (hex: string) => `${hex.slice(0, 12)}…`;

class Failed extends Error {
  constructor(
    readonly reason: ProofFailure,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const fail = (reason: ProofFailure, detail: string): never => {
  throw new Failed(reason, detail);
};

export async function checkEntryProof(input: unknown, crypto: ProofCrypto, opts: ProofCheckOptions = {}): Promise<ProofVerdict> {
  let seq = opts.shown?.seq ?? 0;
  let checkpoint: CheckedCheckpoint | null = null;
  try {
    const parsed = LedgerProofSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return fail(
        'malformed',
        `the server's proof is not well formed (${issue ? `${issue.path.join('.') || 'answer'}: ${issue.message}` : 'shape'})`,
      );
    }
    const p = parsed.data;
    seq ||= p.entry.seq;
    const leaf = await leafOf(p.entry, crypto, opts.shown);
    if (p.checkpoint === null) {
      if (p.inclusion !== null) fail('malformed', 'an audit path came without a checkpoint');
      return { status: 'pending', seq: p.entry.seq, leafHash: toHex(leaf), checkpoint: null };
    }
    const { body, key } = await openCheckpoint(p.vkey, p.checkpoint.note, crypto);
    const fingerprint = toHex(await sha(crypto, utf8(spkiPem(key.publicKey))));
    checkpoint = {
      origin: body.origin,
      size: body.size,
      root: toHex(body.root),
      keyName: key.name,
      keyId: toHex(key.keyId),
      fingerprint,
      time: p.checkpoint.time,
    };
    if (opts.trustedFingerprint !== undefined && opts.trustedFingerprint !== fingerprint)
      fail('bad key', `the checkpoint is signed by key ${short(fingerprint)}, not the trusted key ${short(opts.trustedFingerprint)}`);
    const s = p.entry.seq;
    if (p.inclusion === null) {
      if (s > body.size) return { status: 'pending', seq: s, leafHash: toHex(leaf), checkpoint };
      return fail('malformed', `no audit path for entry #${s}, which the checkpoint of ${body.size} entries covers`);
    }
    if (p.inclusion.treeSize !== body.size)
      fail('bad path', `the path is for a tree of ${p.inclusion.treeSize} entries; the checkpoint signed ${body.size}`);
    const sides = inclusionSides(s - 1, body.size, p.inclusion.path.length);
    if (typeof sides === 'string') return fail('bad path', sides);
    const path = p.inclusion.path.map((h) => fromHex(h)!);
    const root = await inclusionRootAsync(leaf, path, sides, (d) => sha(crypto, d));
    if (!bytesEqual(root, body.root))
      fail('root mismatch', `the audit path leads to root ${short(toHex(root))}; the checkpoint signed ${short(toHex(body.root))}`);
    return { status: 'ok', seq: s, leafHash: toHex(leaf), pathLength: path.length, checkpoint };
  } catch (err) {
    if (err instanceof Failed) return { status: 'failed', seq, reason: err.reason, detail: err.detail, checkpoint };
    throw err;
  }
}

async function sha(crypto: ProofCrypto, data: Bytes): Promise<Bytes> {
  try {
    return await crypto.sha256(data);
  } catch (err) {
    return fail('unsupported', `SHA-256 is not available in this page (${(err as Error).message})`);
  }
}

/** The leaf hash recomputed from the entry's fields, after checking it is the entry shown and that it matches its recorded hash. */
async function leafOf(entry: LedgerEntry, crypto: ProofCrypto, shown: LedgerEntry | undefined): Promise<Bytes> {
  const text = entryCanonicalText(entry);
  if (shown !== undefined) {
    const same = shown.seq === entry.seq && shown.hash === entry.hash && text !== null && entryCanonicalText(shown) === text;
    if (!same) fail('entry mismatch', `the server's proof is for other content than entry #${shown.seq} as shown`);
  }
  if (text === null) return fail('hash mismatch', `entry #${entry.seq}'s fields are not canonical JSON, so they cannot hash to its hash`);
  const leaf = await sha(crypto, leafInput(utf8(text)));
  if (toHex(leaf) !== entry.hash)
    fail(
      'hash mismatch',
      `entry #${entry.seq}'s fields hash to ${short(toHex(leaf))}, not its recorded hash ${short(entry.hash)}: it was changed`,
    );
  return leaf;
}

async function openCheckpoint(vkey: string, noteText: string, crypto: ProofCrypto) {
  let key: ReturnType<typeof parseVkey>;
  try {
    key = parseVkey(vkey);
  } catch (err) {
    return fail('bad key', (err as Error).message);
  }
  const id = (await sha(crypto, keyIdInput(key.name, key.publicKey))).subarray(0, 4);
  if (!bytesEqual(id, key.keyId)) fail('bad key', `the verifier key's id ${toHex(key.keyId)} does not match its name and key`);
  let note: ReturnType<typeof parseNote>;
  try {
    note = parseNote(noteText);
  } catch (err) {
    return fail('bad signature', err instanceof NoteFormatError ? `the checkpoint is not a signed note: ${err.message}` : String(err));
  }
  const sig = note.signatures.find((s) => s.name === key.name && bytesEqual(s.keyId, key.keyId));
  if (!sig) return fail('bad signature', `the checkpoint is not signed by the ledger's key ${key.name}+${toHex(key.keyId)}`);
  if (sig.signature.length !== 64) fail('bad signature', `the signature by ${key.name} is ${sig.signature.length} bytes, not 64`);
  let good: boolean;
  try {
    good = await crypto.ed25519Verify(key.publicKey, sig.signature, utf8(note.text));
  } catch (err) {
    return fail('unsupported', `this page cannot check Ed25519 signatures (${(err as Error).message})`);
  }
  if (!good) fail('bad signature', `the checkpoint's Ed25519 signature by ${key.name} does not verify: its text or signature was changed`);
  try {
    return { body: parseCheckpointText(note.text), key };
  } catch (err) {
    return fail('malformed', `the signed checkpoint does not parse: ${(err as Error).message}`);
  }
}
