// A sandbox's ledger entries in a time window, as the timeline draws them: seq, time, kind, actor,
// one line of text and a tone (shared/types/timeline-label.ts), found through the sandbox index.
import type { TimelineEntriesPage, TimelineEntry } from '../../../shared/types/timeline.js';
import { toTimelineEntry } from '../../../shared/types/timeline-label.js';
import type { Ledger } from './ledger.js';

const PAGE = 1000;

/**
 * The entries of one sandbox (its full id) from `since` to `until`, oldest first, at most `limit`
 * (the oldest ones when more match). The start is found through the sandbox index (the newest entry
 * before `since`), then read forward in pages until `until`: bounded work for a ledger of any size.
 */
export function timelineEntries(
  ledger: Ledger,
  sandboxId: string,
  since: number | undefined,
  until: number | undefined,
  limit: number,
): TimelineEntriesPage {
  let fromSeq = 1;
  if (since !== undefined && since > 0) {
    const before = ledger.browse({ sandboxId, until: new Date(since - 1).toISOString(), limit: 1 }).entries[0];
    if (before) fromSeq = before.seq + 1;
  }
  const entries: TimelineEntry[] = [];
  for (;;) {
    const page = ledger.entries({ sandboxId, fromSeq, limit: PAGE });
    for (const e of page) {
      const time = Date.parse(e.time);
      if (since !== undefined && time < since) continue;
      if (until !== undefined && time > until) return { entries, truncated: false };
      if (entries.length === limit) return { entries, truncated: true };
      entries.push(toTimelineEntry(e));
    }
    if (page.length < PAGE) return { entries, truncated: false };
    fromSeq = page.at(-1)!.seq + 1;
  }
}
