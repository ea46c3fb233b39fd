// Offline verification of an evidence bundle (`warden audit verify --report FILE`): no ledger, no key
// directory, only the bundle (and, if the auditor has them, a pinned key and an earlier bundle).
// Deliberately independent of the store's fast path: hashes are rebuilt with the generic RFC 8785
// canonicalizer from the parsed JSON, as an outside auditor would.
import { createPublicKey } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import { ReportBundleSchema, type LedgerEntry, type ReportBundle, type VerifyResult } from '../../../shared/types/ledger.js';
import { entryCanonicalText } from '../../../shared/ledger/entry-proof.js';
import { entryHash, GENESIS_HASH } from './canonical.js';
import type { Finding } from './diagnose.js';
import { verifyConsistency, verifyInclusion } from './merkle.js';
import { openNote, parseCheckpoint, parseVkey, type CheckpointBody, type VerifierKey } from './note.js';
import { parseWith } from '../../../shared/contracts/parse.js';

export interface BundleVerifyOptions {
  /** The key the auditor trusts (name+id+key), from somewhere other than the bundle itself. */
  vkey?: string;
  /** An earlier bundle of the same log: this one must prove it extends that one. */
  previous?: unknown;
}

export function parseBundle(input: unknown): ReportBundle {
  if (input === null || input === undefined) throw new WardenError('E_BAD_INPUT', 'not a Warden evidence bundle: empty');
  return parseWith(ReportBundleSchema, input, 'not a Warden evidence bundle');
}

const hex = (h: string) => Buffer.from(h, 'hex');

/** The entry's hash rebuilt from its fields (the same canonical text the page's proof check uses), or null if they cannot be canonical. */
function hashOf(e: LedgerEntry): string | null {
  const text = entryCanonicalText(e);
  return text === null ? null : entryHash(text);
}

/** The bundle's key, checked against its PEM copy (what openssl users will use) and any pinned key. */
function bundleKey(b: ReportBundle, pinned: string | undefined): VerifierKey | null {
  try {
    const key = parseVkey(b.publicKey.vkey);
    const pem = createPublicKey(b.publicKey.spkiPem).export({ format: 'der', type: 'spki' });
    if (
      !Buffer.from(pem).subarray(-32).equals(key.raw) ||
      key.name !== b.publicKey.keyName ||
      key.keyId.toString('hex') !== b.publicKey.keyId
    )
      return null;
    if (pinned !== undefined && parseVkey(pinned).vkey !== key.vkey) return null;
    return key;
  } catch {
    return null;
  }
}

function openCheckpoint(b: ReportBundle, key: VerifierKey | null): CheckpointBody | null {
  if (!key) return null;
  try {
    return parseCheckpoint(openNote(b.checkpoint.note, key).text);
  } catch {
    return null;
  }
}

export function verifyBundle(input: unknown, opts: BundleVerifyOptions = {}): VerifyResult {
  const b = parseBundle(input);
  // Entry-level findings (hash, chain, order) explain proof failures that follow from them, so they
  // are reported first; checkpoint-level findings only when the entries themselves are sound.
  const problems: Finding[] = [];
  const proofProblems: Finding[] = [];
  const key = bundleKey(b, opts.vkey);
  const body = openCheckpoint(b, key);
  if (!key || !body) {
    return {
      ok: false,
      entries: b.entries.length,
      firstBad: { seq: Math.max(1, b.checkpoint.size), reason: 'bad signature' },
      checkpoint: null,
    };
  }
  const root = body.root;
  if (body.origin !== b.origin || body.size !== b.checkpoint.size || root.toString('hex') !== b.checkpoint.root) {
    proofProblems.push({ seq: 1, reason: 'checkpoint mismatch' });
  }

  // Entries: each hash, the chain inside each run of consecutive seqs, and the declared selection.
  const proofs = new Map(b.proofs.map((p) => [p.seq, p]));
  const { sandboxId, fromSeq, toSeq } = b.selection;
  const present = new Set(b.entries.map((e) => e.seq));
  let expected = fromSeq;
  let runStart = 0;
  for (let i = 0; i < b.entries.length; i++) {
    const e = b.entries[i]!;
    const prev = b.entries[i - 1];
    if (prev && e.seq <= prev.seq) problems.push({ seq: e.seq, reason: e.seq === prev.seq ? 'duplicate' : 'reordered' });
    if (e.seq < fromSeq || e.seq > toSeq || e.seq > body.size || (sandboxId !== null && e.sandboxId !== sandboxId))
      problems.push({ seq: e.seq, reason: 'inserted' });
    if (sandboxId === null && e.seq > expected) problems.push({ seq: expected, reason: present.has(expected) ? 'reordered' : 'gap' });
    expected = e.seq + 1;
    if (hashOf(e) !== e.hash) problems.push({ seq: e.seq, reason: 'hash mismatch' });
    const inRun = prev !== undefined && prev.seq + 1 === e.seq;
    if (!inRun) runStart = e.seq;
    if ((inRun && e.prevHash !== prev.hash) || (e.seq === 1 && e.prevHash !== GENESIS_HASH))
      problems.push({ seq: e.seq, reason: 'broken link' });
    const next = b.entries[i + 1];
    if (!next || next.seq !== e.seq + 1) {
      // End of a run: its last entry must be in the signed tree; the chain vouches for the rest.
      const p = proofs.get(e.seq);
      const ok = p !== undefined && p.treeSize === body.size && verifyInclusion(hex(e.hash), e.seq - 1, body.size, p.path.map(hex), root);
      if (!ok) proofProblems.push({ seq: runStart, reason: 'checkpoint mismatch' });
    }
  }
  if (sandboxId === null && b.entries.length > 0 && expected <= Math.min(toSeq, body.size)) problems.push({ seq: expected, reason: 'gap' });

  // Earlier exported checkpoints this one claims to extend.
  for (const c of b.consistency) {
    if (c.toSize !== body.size || !verifyConsistency(c.fromSize, c.toSize, hex(c.fromRoot), root, c.path.map(hex)))
      proofProblems.push({ seq: 1, reason: 'checkpoint mismatch' });
  }
  if (opts.previous !== undefined) proofProblems.push(...checkPrevious(parseBundle(opts.previous), b, key, body));

  const first = (list: Finding[]) => list.reduce<Finding | null>((a, p) => (a === null || p.seq < a.seq ? p : a), null);
  const firstBad = first(problems) ?? first(proofProblems);
  return {
    ok: firstBad === null,
    entries: b.entries.length,
    firstBad,
    checkpoint: {
      origin: body.origin,
      size: body.size,
      root: root.toString('hex'),
      keyName: key.name,
      keyId: key.keyId.toString('hex'),
      source: 'bundle',
      note: b.checkpoint.note,
    },
  };
}

/** This log must extend the one an earlier bundle showed: same key, same origin, a valid consistency proof. */
function checkPrevious(old: ReportBundle, b: ReportBundle, key: VerifierKey, body: CheckpointBody): Finding[] {
  const oldBody = openCheckpoint(old, key);
  if (!oldBody) return [{ seq: Math.max(1, old.checkpoint.size), reason: 'bad signature' }];
  if (oldBody.origin !== body.origin) return [{ seq: 1, reason: 'checkpoint mismatch' }];
  if (oldBody.size > body.size) return [{ seq: body.size + 1, reason: 'checkpoint mismatch' }];
  if (oldBody.size === body.size) return oldBody.root.equals(body.root) ? [] : [{ seq: 1, reason: 'checkpoint mismatch' }];
  const proof = b.consistency.find((c) => c.fromSize === oldBody.size);
  if (!proof || !verifyConsistency(oldBody.size, body.size, oldBody.root, body.root, proof.path.map(hex)))
    return [{ seq: 1, reason: 'checkpoint mismatch' }];
  return [];
}
