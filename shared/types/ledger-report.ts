import { z } from 'zod';
import type { StatsHistory } from './timeline.js';

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

/**
 * A sandbox's kept history (shared/types/timeline.ts: buckets with averages and rates) as the
 * report's samples (points with counters): each bucket's rates are summed over its length into the
 * running counters, so the report's rate lines come back to the history's.
 */
export function reportSamplesFromHistory(h: StatsHistory): ReportSample[] {
  const out: ReportSample[] = [];
  let rx = 0;
  let tx = 0;
  for (let i = 0; i < h.time.length; i++) {
    const seconds = h.step[i] ?? 1;
    rx += (h.rx[i] ?? 0) * seconds;
    tx += (h.tx[i] ?? 0) * seconds;
    out.push({
      t: h.time[i]!,
      cpuPct: Math.max(0, h.cpu[i] ?? 0),
      memBytes: Math.max(0, h.memory[i] ?? 0),
      memLimit: Math.max(0, h.memoryLimit[i] ?? 0),
      netRx: rx,
      netTx: tx,
      pids: Math.max(0, h.pids[i] ?? 0),
    });
  }
  return out.slice(-REPORT_MAX_SAMPLES);
}
