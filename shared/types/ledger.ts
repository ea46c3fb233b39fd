import { z } from 'zod';
import { ReportSamplesSchema } from './ledger-report.js';

// The audit ledger as every door and the UI see it. The engine keeps the store; these shapes are what
// crosses a boundary (IPC, HTTP, CLI --json, report bundles), so they are zod schemas the UI can trust.

/** Event kinds are dotted lower-case words: sandbox.created, exec.finished, policy.denied … */
export const LEDGER_KIND_PATTERN = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/;
/** Actors are "user", "system" or an agent's name: printable text, no control characters. */
export const LEDGER_ACTOR_PATTERN = /^[^\p{Cc}\p{Cs}]{1,128}$/u;
/** Sandbox ids are container ids or names. */
export const LEDGER_SANDBOX_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
export const HEX32_PATTERN = /^[0-9a-f]{64}$/;
/** Canonical payloads above this go to a blob; the entry keeps its digest and size. */
export const LEDGER_MAX_PAYLOAD_BYTES = 256 * 1024;

const hex32 = z.string().regex(HEX32_PATTERN, 'expected 64 lower-case hex digits (SHA-256)');

export const LedgerAppendSchema = z
  .object({
    actor: z.string().regex(LEDGER_ACTOR_PATTERN, 'actor is 1–128 printable characters'),
    sandboxId: z.string().regex(LEDGER_SANDBOX_PATTERN, 'sandboxId is a container id or name').nullable().optional(),
    kind: z.string().max(64).regex(LEDGER_KIND_PATTERN, 'kind is dotted lower-case words, e.g. exec.finished'),
    payload: z.unknown(),
  })
  .strict();
export type LedgerAppend = z.infer<typeof LedgerAppendSchema>;

export const LedgerEntrySchema = z
  .object({
    seq: z.number().int().min(1),
    time: z.string(),
    actor: z.string(),
    sandboxId: z.string().nullable(),
    kind: z.string(),
    payload: z.unknown(),
    prevHash: hex32,
    hash: hex32,
  })
  .strict();
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

export const LedgerQuerySchema = z
  .object({
    fromSeq: z.number().int().min(1).optional(),
    toSeq: z.number().int().min(1).optional(),
    sandboxId: z.string().optional(),
    kind: z.string().optional(),
    actor: z.string().optional(),
    limit: z.number().int().min(1).max(100_000).optional(),
  })
  .strict();
export type LedgerQuery = z.infer<typeof LedgerQuerySchema>;

/**
 * Why verification stopped. The first seven are the named failures of the spec; `inserted` is a
 * forged entry spliced into the chain (the entry after it still links to the one before it).
 */
export const VERIFY_REASONS = [
  'hash mismatch',
  'broken link',
  'gap',
  'duplicate',
  'reordered',
  'inserted',
  'checkpoint mismatch',
  'bad signature',
] as const;
export type VerifyReason = (typeof VERIFY_REASONS)[number];

export const CheckpointInfoSchema = z
  .object({
    origin: z.string(),
    size: z.number().int().min(0),
    /** Merkle root (RFC 6962) as hex; the note carries it as base64. */
    root: hex32,
    keyName: z.string(),
    keyId: z.string().regex(/^[0-9a-f]{8}$/),
    /** Where this checkpoint came from: the file kept outside the database, the database, or a bundle. */
    source: z.enum(['file', 'ledger', 'bundle']),
    /** The signed note itself (C2SP signed-note), byte for byte. */
    note: z.string(),
  })
  .strict();
export type CheckpointInfo = z.infer<typeof CheckpointInfoSchema>;

export const VerifyResultSchema = z
  .object({
    ok: z.boolean(),
    entries: z.number().int().min(0),
    firstBad: z
      .object({ seq: z.number().int(), reason: z.enum(VERIFY_REASONS) })
      .strict()
      .nullable(),
    checkpoint: CheckpointInfoSchema.nullable(),
  })
  .strict();
export type VerifyResult = z.infer<typeof VerifyResultSchema>;

export const SignedCheckpointSchema = z
  .object({
    origin: z.string(),
    size: z.number().int().min(0),
    root: hex32,
    keyName: z.string(),
    keyId: z.string(),
    note: z.string(),
    time: z.string(),
  })
  .strict();
export type SignedCheckpoint = z.infer<typeof SignedCheckpointSchema>;

export const InclusionProofSchema = z
  .object({
    /** The proof is for this entry: leaf index seq − 1. */
    seq: z.number().int().min(1),
    treeSize: z.number().int().min(1),
    path: z.array(hex32).max(64),
  })
  .strict();
export type InclusionProof = z.infer<typeof InclusionProofSchema>;

export const ConsistencyProofSchema = z
  .object({
    fromSize: z.number().int().min(0),
    fromRoot: hex32,
    toSize: z.number().int().min(0),
    path: z.array(hex32).max(128),
  })
  .strict();
export type ConsistencyProof = z.infer<typeof ConsistencyProofSchema>;

export const BUNDLE_FORMAT = 'warden-ledger-bundle/v1';

/** A self-contained evidence bundle: everything an auditor needs, nothing that needs Warden. */
export const ReportBundleSchema = z
  .object({
    format: z.literal(BUNDLE_FORMAT),
    createdAt: z.string(),
    origin: z.string(),
    selection: z
      .object({
        sandboxId: z.string().nullable(),
        fromSeq: z.number().int().min(1),
        toSeq: z.number().int().min(0),
      })
      .strict(),
    /** How the hashes are made, in words, so the bundle explains itself. */
    hashSpec: z.string(),
    checkpoint: z.object({ note: z.string(), size: z.number().int().min(0), root: hex32 }).strict(),
    publicKey: z
      .object({
        /** C2SP verifier key: name+keyid+base64(0x01 ‖ Ed25519 public key). */
        vkey: z.string(),
        keyName: z.string(),
        keyId: z.string(),
        /** The same key as SubjectPublicKeyInfo PEM, for openssl. */
        spkiPem: z.string(),
      })
      .strict(),
    entries: z.array(LedgerEntrySchema),
    /** One inclusion proof per run of consecutive entries: for the run's last entry; the chain covers the rest. */
    proofs: z.array(InclusionProofSchema),
    /** Proofs that this checkpoint extends earlier exported checkpoints. */
    consistency: z.array(ConsistencyProofSchema),
    /** What Warden's full verification of the ledger said at export time (re-check it, don't trust it). */
    verification: VerifyResultSchema,
  })
  .strict();
export type ReportBundle = z.infer<typeof ReportBundleSchema>;

// ---- the ledger view (UI): browse, verify with progress, export ----

/** Entry filters of the ledger view: the store's own filters plus a run and a time window. */
export const LedgerBrowseSchema = z
  .object({
    sandboxId: z.string().max(128).optional(),
    runId: z.string().max(64).optional(),
    kind: z.string().max(64).optional(),
    actor: z.string().max(128).optional(),
    /** ISO 8601 times, inclusive. */
    since: z.string().datetime({ offset: true }).optional(),
    until: z.string().datetime({ offset: true }).optional(),
    /** Newest first from this seq down (paging); default: from the head. */
    beforeSeq: z.number().int().min(1).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .strict();
export type LedgerBrowse = z.infer<typeof LedgerBrowseSchema>;

export interface LedgerEntriesPage {
  /** Newest first. */
  entries: LedgerEntry[];
  /** Entries in the ledger as a whole. */
  size: number;
  /** Seq to pass as beforeSeq for the next (older) page, or null at the start. */
  nextBeforeSeq: number | null;
}

export interface LedgerSummary {
  size: number;
  headHash: string;
  /** SHA-256 fingerprint of the Ed25519 public key (hex), and its C2SP key name and id. */
  key: { fingerprint: string; keyName: string; keyId: string };
  latestCheckpoint: { size: number; time: string; reason: string } | null;
  /** Values the filters can take. */
  kinds: string[];
  actors: string[];
}

export const LedgerVerifyRequestSchema = z
  .object({
    /** The client's id for this job: progress events carry it. */
    jobId: z.string().min(1).max(64),
  })
  .strict();

export interface LedgerVerifyOutcome extends VerifyResult {
  durationMs: number;
  key: { fingerprint: string; keyName: string; keyId: string };
}

export const LedgerExportRequestSchema = z
  .object({
    sandboxId: z.string().max(128).optional(),
    fromSeq: z.number().int().min(1).optional(),
    toSeq: z.number().int().min(1).optional(),
    /** Resource samples of the sandbox or run, drawn on the HTML report's timeline (not part of the signed bundle). */
    samples: ReportSamplesSchema.optional(),
  })
  .strict();

export interface LedgerExportResult {
  /** File names a user would save them under. */
  jsonName: string;
  htmlName: string;
  /** The evidence bundle (JSON text, as `warden audit export --out` writes it) and the HTML report. */
  json: string;
  html: string;
  entries: number;
}

// ---- snapshots (engine/snapshot/) ----

/**
 * The ledger kinds of snapshots. Each payload names the sandbox and tag and carries the digests of
 * what was saved or restored: the image id of the root filesystem's changes and the sha256 of the
 * /workspace archive (`snapshot.taken` also their sizes; `sandbox.reset` and `sandbox.forked` the
 * container they came from, and come after a `sandbox.created` of the new container).
 */
export const SNAPSHOT_LEDGER_KINDS = ['snapshot.taken', 'snapshot.removed', 'sandbox.reset', 'sandbox.forked'] as const;
export type SnapshotLedgerKind = (typeof SNAPSHOT_LEDGER_KINDS)[number];

// ---- egress: one entry per connection an `egress` sandbox attempts, one when it ends ----

export const NET_DECISIONS = ['allow', 'deny'] as const;

/** `net.connect`: a destination asked for through the egress proxy, and what policy decided. */
export const NetConnectPayloadSchema = z
  .object({
    /** Pairs this entry with its net.closed (unique within the recording process). */
    connId: z.string(),
    /** CONNECT (a tunnel, TLS checked against the name) or a plain HTTP request. */
    via: z.enum(['connect', 'http']),
    host: z.string(),
    port: z.number().int(),
    /** What the name resolved to (or the literal); null when it was denied before resolving. */
    address: z.string().nullable(),
    decision: z.enum(NET_DECISIONS),
    /** The rule that decided, e.g. `egress.rules[2] (host *.example.com, allow)`, or the default or guard. */
    rule: z.string(),
    /** The run and tool call most likely to have made it (the exec in flight in the sandbox), where known. */
    runId: z.string().nullable().optional(),
    callId: z.string().nullable().optional(),
  })
  .strict();
export type NetConnectPayload = z.infer<typeof NetConnectPayloadSchema>;

/** `net.closed`: an allowed connection ended. */
export const NetClosedPayloadSchema = z
  .object({
    connId: z.string(),
    host: z.string(),
    port: z.number().int(),
    /** From the sandbox to the destination, and back: what passed each way, plain HTTP's heads included (not the proxy's own answers, such as CONNECT's 200). */
    bytesOut: z.number().int().min(0),
    bytesIn: z.number().int().min(0),
    durationMs: z.number().min(0),
    /** Why it ended other than by a close (connect refused, reset, SNI mismatch …), else null. */
    error: z.string().nullable(),
  })
  .strict();
export type NetClosedPayload = z.infer<typeof NetClosedPayloadSchema>;

/**
 * `net.throttled`: connections refused, undecided, because the sandbox opened them faster than its
 * rate (egress/egress-intake.ts); one entry sums those of about a second, so a flood cannot grow the
 * ledger an entry per attempt.
 */
export const NetThrottledPayloadSchema = z
  .object({
    refused: z.number().int().min(1),
    /** The rate that held: new connections a second, and the burst allowed above it. */
    perSecond: z.number().min(0),
    burst: z.number().int().min(0),
  })
  .strict();
export type NetThrottledPayload = z.infer<typeof NetThrottledPayloadSchema>;

// `run.exported` (a run's changes taken home as a patch or a branch): RunExportedPayloadSchema in run-export.ts.
