// `warden run export`: what it is asked for (a patch file, or a new branch of a host repository),
// checked so a wrong combination is one clear error before the run's diff is fetched, and the
// `run.exported` ledger entry it leaves.
import { z } from 'zod';
import { HEX32_PATTERN } from './ledger.js';

export const RunExportOptionsSchema = z
  .object({
    patch: z.string().min(1).optional(),
    repo: z.string().min(1).optional(),
    branch: z.string().min(1).max(200).optional(),
  })
  .strict()
  .refine((o) => (o.patch === undefined) !== (o.repo === undefined), { message: 'give either --patch FILE or --repo DIR --branch NAME' })
  .refine((o) => (o.repo === undefined) === (o.branch === undefined), { message: '--repo DIR and --branch NAME go together' });
export type RunExportOptions = z.infer<typeof RunExportOptionsSchema>;

export const RUN_EXPORTED_KIND = 'run.exported';
export const RUN_DIFFED_KIND = 'run.diffed';

/**
 * `run.diffed`: a run's workspace diff computed and handed to someone (API `GET /v1/runs/{run}/diff`,
 * `warden run diff`, the Changes tab, an export). `diffSha256` is the SHA-256 of the diff exactly as
 * returned, in canonical JSON (RFC 8785, as ledger entries are hashed): parse the answer, canonicalize,
 * hash, and it matches.
 */
export const RunDiffedPayloadSchema = z
  .object({
    runId: z.string(),
    agent: z.string(),
    sandboxId: z.string(),
    diffSha256: z.string().regex(HEX32_PATTERN),
    files: z.number().int().min(0),
    totals: z.object({ added: z.number().int(), modified: z.number().int(), deleted: z.number().int() }).strict(),
    base: z.object({ kind: z.enum(['sandbox', 'run']), id: z.string(), takenAt: z.string() }).strict(),
    truncated: z.boolean(),
  })
  .strict();
export type RunDiffedPayload = z.infer<typeof RunDiffedPayloadSchema>;

/**
 * `run.exported`: a run's workspace diff taken home by a person, as a patch file or as a commit on a
 * new branch of a host repository. `patchSha256` is the digest of exactly the patch written or
 * applied; `left` counts the changed files a text patch could not carry (listed in its header).
 */
export const RunExportedPayloadSchema = z
  .object({
    runId: z.string(),
    agent: z.string(),
    patchSha256: z.string().regex(HEX32_PATTERN),
    /** The digest of the diff the patch was made from (as its `run.diffed` entry names it). */
    diffSha256: z.string().regex(HEX32_PATTERN).optional(),
    files: z.number().int().min(0),
    /** Of those, files carried with their exact bytes (binary, or text too large to diff). */
    binary: z.number().int().min(0).optional(),
    left: z.number().int().min(0),
    to: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('patch'), path: z.string() }).strict(),
      z.object({ kind: z.literal('git'), repo: z.string(), branch: z.string(), commit: z.string() }).strict(),
    ]),
  })
  .strict();
export type RunExportedPayload = z.infer<typeof RunExportedPayloadSchema>;
