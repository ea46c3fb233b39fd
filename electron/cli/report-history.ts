// The HTML report's resource samples when the export names none (--samples): the exported sandbox's
// history as the control panel kept it (stats.db beside the ledger), so `warden audit export
// --sandbox X --html F` draws the same resources the timeline shows. A home without that file (no
// panel ever ran) gives a report without samples, which says so; that is no failure.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { reportSamplesFromHistory, REPORT_MAX_SAMPLES, type ReportSample } from '../../shared/types/ledger-report.js';
import { MAX_HISTORY_POINTS } from '../../shared/types/timeline.js';

export async function keptSamples(ledgerFile: string, sandboxId: string | null): Promise<ReportSample[]> {
  if (!sandboxId || !/^[0-9a-f]{64}$/.test(sandboxId)) return [];
  const { StatsHistoryStore, statsHistoryFile } = await import('../engine/stats-history/history-store.js');
  const file = statsHistoryFile(dirname(ledgerFile));
  if (!existsSync(file)) return [];
  const store = StatsHistoryStore.open(file);
  try {
    return reportSamplesFromHistory(store.history(sandboxId, { maxPoints: Math.min(MAX_HISTORY_POINTS, REPORT_MAX_SAMPLES) }));
  } finally {
    store.close();
  }
}
