import { z } from 'zod';

// Resource samples an HTML report may carry beside the ledger's entries (the control panel's resource
// history of the exported sandbox or run). They are drawn on the report's timeline, above the tool
// calls and events; they are not part of the signed ledger, and the report says so.

export const ReportSampleSchema = z
  .object({
    /** When it was read, ms since the epoch (a downsampled history may give fractions). */
    t: z.number().min(0),
    /** Percent of one core (200 = two cores busy). */
    cpuPct: z.number().min(0).max(1_000_000),
    memBytes: z.number().min(0),
    /** The sandbox's memory limit in bytes; 0 when it has none. */
    memLimit: z.number().min(0),
    /** Bytes received and sent since the sandbox started (counters, as the engine reports them). */
    netRx: z.number().min(0),
    netTx: z.number().min(0),
    /** Processes (an average over a downsampled slice may be fractional). */
    pids: z.number().min(0),
  })
  .strict();
export type ReportSample = z.infer<typeof ReportSampleSchema>;

/** At most this many samples per report (5½ hours at 1 Hz; a longer history is downsampled first). */
export const REPORT_MAX_SAMPLES = 20_000;

export const ReportSamplesSchema = z.array(ReportSampleSchema).max(REPORT_MAX_SAMPLES);
