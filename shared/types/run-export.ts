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
    files: z.number().int().min(0),
    left: z.number().int().min(0),
    to: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('patch'), path: z.string() }).strict(),
      z.object({ kind: z.literal('git'), repo: z.string(), branch: z.string(), commit: z.string() }).strict(),
    ]),
  })
  .strict();
export type RunExportedPayload = z.infer<typeof RunExportedPayloadSchema>;
