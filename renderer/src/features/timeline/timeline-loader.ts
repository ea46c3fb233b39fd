// What a timeline asks the door for: the sandbox's resource history and its ledger entries over
// the window (in one round trip each, side by side), and finer points for a stretch the view zoomed
// into when what it holds there is coarser than the history keeps.
import { HISTORY_STEPS, type TimelineEntry } from '../../../../shared/types/timeline.js';
import type { WardenClient } from '../../api/client.js';
import { coarsestIn, fromHistory, splice, type HistoryData } from './timeline-data.js';

export const MAX_POINTS = 4000;
const MAX_ENTRIES = 20_000;

export async function loadWindow(
  client: WardenClient,
  sandboxId: string,
  from: number | null,
  to: number | null,
): Promise<{ data: HistoryData; entries: TimelineEntry[] }> {
  const [history, page] = await Promise.all([
    client.call('stats.history', { sandboxId, ...(from === null ? {} : { from }), ...(to === null ? {} : { to }), maxPoints: MAX_POINTS }),
    client.call('timeline.entries', {
      sandboxId,
      ...(from === null ? {} : { since: from }),
      ...(to === null ? {} : { until: to }),
      limit: MAX_ENTRIES,
    }),
  ]);
  return { data: fromHistory(history), entries: page.entries };
}

/** The data with finer points around [min, max] spliced in, or null when there is nothing finer to get. */
export async function finerHistory(
  client: WardenClient,
  sandboxId: string,
  data: HistoryData,
  min: number,
  max: number,
): Promise<HistoryData | null> {
  const span = max - min;
  const have = coarsestIn(data, min, max);
  const could = HISTORY_STEPS.find((s) => (2 * span) / (s * 1000) <= MAX_POINTS) ?? have;
  if (have <= 1 || could >= have) return null;
  const h = await client.call('stats.history', {
    sandboxId,
    from: Math.max(0, Math.floor(min - span / 2)),
    to: Math.ceil(max + span / 2),
    maxPoints: MAX_POINTS,
  });
  if (!h.time.length || Math.max(...h.step) >= have) return null;
  return splice(data, fromHistory(h));
}
