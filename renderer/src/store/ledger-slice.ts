// The ledger view's state: the summary, the filters, the loaded entries (newest first), the open
// entry, the last verification and the last export. live/ledger-sync.ts and live/ledger-controller.ts fill it; the view reads it.
import type { StateCreator } from 'zustand';
import type { ErrorInfo } from '../../../shared/errors.js';
import type { LedgerBrowse, LedgerEntry, LedgerExportResult, LedgerSummary, LedgerVerifyOutcome } from '../../../shared/types/ledger.js';
import type { AppState } from './index.js';

/** What the filter inputs hold, as typed ('' = any). Times are `datetime-local` values (local time). */
export interface LedgerFilters {
  sandbox: string;
  runId: string;
  kind: string;
  actor: string;
  since: string;
  until: string;
}

export const NO_LEDGER_FILTERS: LedgerFilters = { sandbox: '', runId: '', kind: '', actor: '', since: '', until: '' };

export type LedgerVerifyState =
  | { phase: 'idle' }
  | { phase: 'running'; jobId: string; done: number; total: number }
  | { phase: 'done'; outcome: LedgerVerifyOutcome }
  | { phase: 'error'; error: ErrorInfo };

export interface LedgerExportScope {
  sandboxId?: string;
  fromSeq?: number;
  toSeq?: number;
}

export type LedgerExportState =
  | { phase: 'idle' }
  | { phase: 'running' }
  | { phase: 'done'; result: Omit<LedgerExportResult, 'json' | 'html'>; scope: LedgerExportScope; jsonUrl: string; htmlUrl: string }
  | { phase: 'error'; error: ErrorInfo };

export interface LedgerSlice {
  ledgerSummary: LedgerSummary | null;
  /** Why the ledger could not be read (e.g. this door runs without it); null when it could. */
  ledgerError: ErrorInfo | null;
  ledgerFilters: LedgerFilters;
  /** Loaded entries, newest first. */
  ledgerEntries: LedgerEntry[];
  /** beforeSeq of the next older page; null when the oldest matching entry is loaded. */
  ledgerNextBefore: number | null;
  /**
   * null: the list follows the head (new entries go on top). A seq: the list is a window that ends
   * at that seq (after a jump to an entry), and newer entries are loaded by asking for them.
   */
  ledgerWindowTop: number | null;
  ledgerLoading: 'idle' | 'first' | 'older' | 'newer';
  /** True once the first page arrived. */
  ledgerLoaded: boolean;
  /** The entry whose details are open. */
  ledgerOpen: number | null;
  /** The entry to highlight and scroll to (the first bad entry of a failed verification). */
  ledgerFocus: number | null;
  /** Why it is highlighted: the first bad entry of a verification, or the target of a link (#ledger?seq=N). */
  ledgerFocusKind: 'bad' | 'link';
  ledgerVerify: LedgerVerifyState;
  ledgerExport: LedgerExportState;

  setLedgerSummary(summary: LedgerSummary): void;
  setLedgerError(error: ErrorInfo | null): void;
  setLedgerFilters(patch: Partial<LedgerFilters>): void;
  /** Replaces the list (a new filter, a reload, a jump). */
  setLedgerList(entries: LedgerEntry[], nextBefore: number | null, windowTop: number | null): void;
  /** Adds an older page at the bottom. */
  appendOlderLedger(entries: LedgerEntry[], nextBefore: number | null): void;
  /** Adds newer entries on top (live appends, refreshes, "newer" in a window). */
  prependLedger(entries: LedgerEntry[], windowTop: number | null): void;
  setLedgerLoading(loading: LedgerSlice['ledgerLoading']): void;
  openLedgerEntry(seq: number | null): void;
  setLedgerFocus(seq: number | null, kind?: 'bad' | 'link'): void;
  setLedgerVerify(state: LedgerVerifyState): void;
  setLedgerExport(state: LedgerExportState): void;
}

/** At most this many rows stay loaded; live appends push the oldest out (they can be paged back in). */
export const LEDGER_MAX_ROWS = 3000;

export const createLedgerSlice: StateCreator<AppState, [], [], LedgerSlice> = (set) => ({
  ledgerSummary: null,
  ledgerError: null,
  ledgerFilters: NO_LEDGER_FILTERS,
  ledgerEntries: [],
  ledgerNextBefore: null,
  ledgerWindowTop: null,
  ledgerLoading: 'idle',
  ledgerLoaded: false,
  ledgerOpen: null,
  ledgerFocus: null,
  ledgerFocusKind: 'bad',
  ledgerVerify: { phase: 'idle' },
  ledgerExport: { phase: 'idle' },

  setLedgerSummary: (summary) => set({ ledgerSummary: summary, ledgerError: null }),
  setLedgerError: (error) => set({ ledgerError: error }),
  setLedgerFilters: (patch) => set((s) => ({ ledgerFilters: { ...s.ledgerFilters, ...patch } })),
  setLedgerList: (entries, nextBefore, windowTop) =>
    set({ ledgerEntries: entries, ledgerNextBefore: nextBefore, ledgerWindowTop: windowTop, ledgerLoaded: true, ledgerError: null }),
  appendOlderLedger: (entries, nextBefore) =>
    set((s) => {
      const last = s.ledgerEntries[s.ledgerEntries.length - 1]?.seq ?? Infinity;
      return { ledgerEntries: [...s.ledgerEntries, ...entries.filter((e) => e.seq < last)], ledgerNextBefore: nextBefore };
    }),
  prependLedger: (entries, windowTop) =>
    set((s) => {
      const top = s.ledgerEntries[0]?.seq ?? 0;
      const fresh = entries.filter((e) => e.seq > top).sort((a, b) => b.seq - a.seq);
      if (fresh.length === 0 && windowTop === s.ledgerWindowTop) return s;
      let list = [...fresh, ...s.ledgerEntries];
      let nextBefore = s.ledgerNextBefore;
      if (list.length > LEDGER_MAX_ROWS) {
        list = list.slice(0, LEDGER_MAX_ROWS);
        nextBefore = list[list.length - 1]!.seq;
      }
      return { ledgerEntries: list, ledgerNextBefore: nextBefore, ledgerWindowTop: windowTop };
    }),
  setLedgerLoading: (loading) => set({ ledgerLoading: loading }),
  openLedgerEntry: (seq) => set({ ledgerOpen: seq }),
  setLedgerFocus: (seq, kind = 'bad') => set({ ledgerFocus: seq, ledgerFocusKind: kind }),
  setLedgerVerify: (state) => set({ ledgerVerify: state }),
  setLedgerExport: (state) => set({ ledgerExport: state }),
});

/** Any filter set? */
export function hasLedgerFilters(f: LedgerFilters): boolean {
  return Object.values(f).some((v) => v !== '');
}

/** A `datetime-local` value (local time) as an ISO instant, or undefined when empty or unreadable. */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const t = new Date(value);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

export type LedgerBrowseFilter = Omit<LedgerBrowse, 'beforeSeq' | 'limit'>;

/** A sandbox as a person types it (name, full id, or an id prefix of 6+) as the id the ledger keeps. */
export function resolveSandboxRef(typed: string, sandboxes: AppState['sandboxes']): string | undefined {
  const t = typed.trim();
  if (!t) return undefined;
  const all = Object.values(sandboxes);
  const byPrefix = t.length >= 6 ? all.find((x) => x.id.startsWith(t)) : undefined;
  // Not a sandbox that exists now (destroyed ones are in the ledger too): taken as typed.
  return (all.find((x) => x.id === t) ?? all.find((x) => x.name === t) ?? byPrefix)?.id ?? t;
}

/** The entries request for the current filters. */
export function ledgerRequest(s: Pick<AppState, 'ledgerFilters' | 'sandboxes'>): LedgerBrowseFilter {
  return ledgerBrowseParams(s.ledgerFilters, resolveSandboxRef(s.ledgerFilters.sandbox, s.sandboxes));
}

/** The request for a page with these filters; `sandboxId` is the filter's sandbox already resolved to an id. */
export function ledgerBrowseParams(f: LedgerFilters, sandboxId: string | undefined): LedgerBrowseFilter {
  const p: LedgerBrowseFilter = {};
  if (sandboxId) p.sandboxId = sandboxId;
  if (f.runId.trim()) p.runId = f.runId.trim();
  if (f.kind) p.kind = f.kind;
  if (f.actor) p.actor = f.actor;
  const since = localToIso(f.since);
  const until = localToIso(f.until);
  if (since) p.since = since;
  if (until) p.until = until;
  return p;
}

/** Whether a pushed entry belongs in the list the server would return for these params. */
export function ledgerEntryMatches(e: LedgerEntry, p: LedgerBrowseFilter): boolean {
  if (p.sandboxId !== undefined && e.sandboxId !== p.sandboxId) return false;
  if (p.kind !== undefined && e.kind !== p.kind) return false;
  if (p.actor !== undefined && e.actor !== p.actor) return false;
  if (p.runId !== undefined) {
    const run = e.payload !== null && typeof e.payload === 'object' ? (e.payload as Record<string, unknown>).runId : undefined;
    if (run !== p.runId) return false;
  }
  if (p.since !== undefined && e.time < p.since) return false;
  if (p.until !== undefined && e.time > p.until) return false;
  return true;
}
