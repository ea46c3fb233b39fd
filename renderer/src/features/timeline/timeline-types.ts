// The shapes a timeline is made from: the elements it draws into (made by TimelineView.tsx) and
// what it is told by the view around it (the window, the calls, where an item's entry opens).
import type { ToolCallInfo } from '../../../../shared/types/run.js';
import type { WardenClient } from '../../api/client.js';
import type { StatsBuffer } from '../../live/stats-buffer.js';

export interface TimelineElements {
  body: HTMLElement;
  /** One per graph (CHART_SPECS order), CHART_HEIGHT px tall. */
  holders: HTMLElement[];
  /** The lanes' row (hit tests are relative to it) and its plot area, where the lanes are drawn. */
  lanes: HTMLElement;
  lanesView: HTMLElement;
  cursor: HTMLElement;
  tip: HTMLElement;
  announce: HTMLElement;
  rangeLabel: HTMLElement;
  /** Says how many resource points are drawn (data-points holds the number). */
  pointsLabel: HTMLElement;
}

export interface TimelineOptions {
  client: WardenClient;
  stats: StatsBuffer;
  sandboxId: string;
  /** The window the timeline is about (ms); `to` null: it is still going (live). */
  from: number | null;
  to: number | null;
  /** The calls drawn in the calls lane (a run's), and how to hear of changes to them. */
  calls(): readonly ToolCallInfo[];
  onCallsChanged(fn: () => void): () => void;
  /** Opens the Ledger view at an entry. */
  openEntry(seq: number): void;
  /** Told when loading ends (or fails) and when the item count changes. */
  onStatus(status: { loading: boolean; error: string | null; items: number; follow: boolean }): void;
}
