// An attestation: Warden's check, from inside a sandbox, that each promise it made holds, with the
// evidence it saw. Recorded in the ledger (sandbox.attested) and pushed to UIs; the shapes cross
// every door, so they live here.
import { z } from 'zod';
import { SandboxRefSchema } from './sandbox.js';

export interface AttestationCheck {
  /** Stable id: runtime, capabilities, …, deep.pids. */
  id: string;
  /** The promise in words, as a person reads it. */
  promise: string;
  /** False only when the promise was seen not to hold (a skipped check is not a failure). */
  ok: boolean;
  /** What was seen (or, when skipped, why nothing was tried). */
  evidence: string;
  /** Not checked on this sandbox (not promised, or not checkable on this tier/host). */
  skipped?: boolean;
}

export interface Attestation {
  sandboxId: string;
  name: string;
  runtime: string;
  deep: boolean;
  /** Every check ok or skipped. */
  ok: boolean;
  time: string;
  durationMs: number;
  /** Who asked: a person ("user"), or "system" for the automatic one after start. */
  actor: string;
  checks: AttestationCheck[];
}

export const AttestRequestSchema = z.object({ ref: SandboxRefSchema, deep: z.boolean().optional() }).strict();
