import { z } from 'zod';
import { HEX32_PATTERN, LedgerEntrySchema } from './ledger.js';

// An entry's inclusion proof as the Ledger view asks for it and checks it in the page: the entry (its
// leaf-hash inputs), the latest signed checkpoint, the RFC 6962 audit path at that checkpoint's size,
// and the ledger's public key. The page trusts none of it: it is parsed with this schema, then
// recomputed (shared/ledger/entry-proof.ts).

const hex32 = z.string().regex(HEX32_PATTERN, 'expected 64 lower-case hex digits (SHA-256)');

export const LedgerProofRequestSchema = z.object({ seq: z.number().int().min(1) }).strict();

export const LedgerProofSchema = z
  .object({
    entry: LedgerEntrySchema,
    /** The newest checkpoint the ledger signed (C2SP signed note), and when; null before the first. */
    checkpoint: z
      .object({ note: z.string().max(100_000), time: z.string().max(64) })
      .strict()
      .nullable(),
    /** The audit path for leaf seq − 1 in the checkpoint's tree, leaf first; null when the entry is newer than the checkpoint. */
    inclusion: z
      .object({ treeSize: z.number().int().min(1), path: z.array(hex32).max(64) })
      .strict()
      .nullable(),
    /** The ledger's verifier key: name+keyid+base64(0x01 ‖ Ed25519 key). */
    vkey: z.string().max(1000),
  })
  .strict();
export type LedgerProof = z.infer<typeof LedgerProofSchema>;

/** What a signed checkpoint said, once its signature checked out. */
export interface CheckedCheckpoint {
  origin: string;
  size: number;
  /** Merkle root, hex. */
  root: string;
  keyName: string;
  /** Key id, hex (4 bytes). */
  keyId: string;
  /** SHA-256 of the key's SPKI PEM, hex: the fingerprint the ledger header and `warden audit` show. */
  fingerprint: string;
  time: string;
}

/** Why a proof did not check out, each a different lie (or a different accident). */
export const PROOF_FAILURES = [
  /** The server's answer is not a proof at all (shape, hex, sizes). */
  'malformed',
  /** The proof is for other content than the entry shown. */
  'entry mismatch',
  /** The entry's fields do not hash to its hash: it was changed. */
  'hash mismatch',
  /** The verifier key's id does not match its name and key, or it is not an Ed25519 key. */
  'bad key',
  /** The checkpoint is not signed by the ledger's key, or the signature does not verify. */
  'bad signature',
  /** The audit path cannot prove this leaf in a tree of this size (length, sizes). */
  'bad path',
  /** The path is well formed but leads to a different root than the checkpoint signed. */
  'root mismatch',
  /** This page cannot check (no WebCrypto SHA-256 or Ed25519 here). */
  'unsupported',
] as const;
export type ProofFailure = (typeof PROOF_FAILURES)[number];

export type ProofVerdict =
  | { status: 'ok'; seq: number; leafHash: string; pathLength: number; checkpoint: CheckedCheckpoint }
  /** Newer than the latest signed checkpoint: only the hash chain holds it so far. */
  | { status: 'pending'; seq: number; leafHash: string; checkpoint: CheckedCheckpoint | null }
  | { status: 'failed'; seq: number; reason: ProofFailure; detail: string; checkpoint: CheckedCheckpoint | null };
