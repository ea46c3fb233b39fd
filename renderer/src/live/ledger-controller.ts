// The ledger view's actions: the first load and reloads when the filters change, paging older and
// newer, jumping to an entry, verifying with progress, exporting a report. One controller per
// client, shared by the view (which calls it) and ledger-sync.ts (which loads and refreshes).
import { toErrorInfo } from '../../../shared/errors.js';
import type { LedgerBrowse } from '../../../shared/types/ledger.js';
import { reportSamplesFromHistory, REPORT_MAX_SAMPLES, type ReportSample } from '../../../shared/types/ledger-report.js';
import { MAX_HISTORY_POINTS } from '../../../shared/types/timeline.js';
import type { WardenClient } from '../api/client.js';
import type { Store } from '../store/index.js';
import { ledgerRequest, NO_LEDGER_FILTERS, type LedgerExportScope } from '../store/ledger-slice.js';

const PAGE = 200;

export interface LedgerController {
  /** Reloads if the filters now ask for another list than the one loaded. */
  filtersChanged(): void;
  /** Summary and the first page, from scratch (filters changed, or the first load). */
  reload(): Promise<void>;
  /** Summary and any entries newer than the top of the list. */
  refresh(): Promise<void>;
  loadOlder(): Promise<void>;
  /** In a window after a jump: the next newer page. */
  loadNewer(): Promise<void>;
  /** Leaves a window and follows the head again. */
  backToNewest(): Promise<void>;
  /** Loads the page holding `seq` (filters cleared, since it may not match them), opens and highlights it (as bad unless it came from a link). */
  showEntry(seq: number, kind?: 'bad' | 'link'): Promise<void>;
  /** A deep link (#ledger?seq=N): shows the entry now, or once the link is open. */
  jumpTo(seq: number): void;
  /** The link (re)opened: a waiting deep link, else the first page. */
  linkOpened(): Promise<void>;
  verify(): Promise<void>;
  exportReport(scope: LedgerExportScope): Promise<void>;
  dismissExport(): void;
}

const controllers = new WeakMap<WardenClient, LedgerController>();

/** The one controller of this client (the sync and the view share it). */
export function ledgerController(client: WardenClient, store: Store): LedgerController {
  let c = controllers.get(client);
  if (!c) controllers.set(client, (c = createController(client, store)));
  return c;
}

function createController(client: WardenClient, store: Store): LedgerController {
  const state = () => store.getState();
  /** Bumped whenever the list is replaced, so answers for an older list are dropped. */
  let generation = 0;

  /** The filters the list was last loaded with (a change of filters that changes nothing reloads nothing). */
  let loadedWith = '';
  const params = () => ledgerRequest(state());

  const page = (extra: Pick<LedgerBrowse, 'beforeSeq' | 'limit'>) => client.call('ledger.entries', { ...params(), ...extra });

  const fail = (err: unknown) => {
    const info = toErrorInfo(err);
    // Not reachable right now: the next (re)connect loads again; say nothing meanwhile.
    if (info.code === 'E_ENGINE_UNREACHABLE' && state().link !== 'open') return;
    state().setLedgerError(info);
  };

  const summary = async () => state().setLedgerSummary(await client.call('ledger.summary', {}));

  const reload = async () => {
    const mine = ++generation;
    loadedWith = JSON.stringify(params());
    state().setLedgerLoading('first');
    try {
      const [first] = await Promise.all([page({ limit: PAGE }), summary()]);
      if (mine !== generation) return;
      state().setLedgerList(first.entries, first.nextBeforeSeq, null);
    } catch (err) {
      if (mine === generation) fail(err);
    } finally {
      if (mine === generation) state().setLedgerLoading('idle');
    }
  };

  const refresh = async () => {
    if (!state().ledgerLoaded) return reload();
    const mine = generation;
    try {
      await summary();
      if (state().ledgerWindowTop !== null) return; // a window stays put; "newer" moves it
      const newest = await page({ limit: PAGE });
      if (mine !== generation || state().ledgerWindowTop !== null) return;
      const top = state().ledgerEntries[0]?.seq ?? 0;
      const fresh = newest.entries.filter((e) => e.seq > top);
      // More new entries than a page: the list would have a hole, so it starts again from the head.
      if (fresh.length === newest.entries.length && newest.nextBeforeSeq !== null && top > 0) {
        ++generation;
        state().setLedgerList(newest.entries, newest.nextBeforeSeq, null);
      } else state().prependLedger(fresh, null);
    } catch (err) {
      fail(err);
    }
  };

  const loadOlder = async () => {
    const s = state();
    if (s.ledgerNextBefore === null || s.ledgerLoading !== 'idle') return;
    const mine = generation;
    s.setLedgerLoading('older');
    try {
      const older = await page({ beforeSeq: s.ledgerNextBefore, limit: PAGE });
      if (mine === generation) state().appendOlderLedger(older.entries, older.nextBeforeSeq);
    } catch (err) {
      if (mine === generation) fail(err);
    } finally {
      if (mine === generation) state().setLedgerLoading('idle');
    }
  };

  const loadNewer = async () => {
    const s = state();
    const top = s.ledgerWindowTop;
    if (top === null || s.ledgerLoading !== 'idle') return;
    const mine = generation;
    s.setLedgerLoading('newer');
    try {
      // At most PAGE seqs lie in (top, top + PAGE], so one page of them holds every match.
      const bound = top + PAGE;
      const newer = await page({ beforeSeq: bound + 1, limit: PAGE });
      if (mine !== generation) return;
      const size = state().ledgerSummary?.size ?? 0;
      state().prependLedger(
        newer.entries.filter((e) => e.seq > top),
        bound >= size ? null : bound,
      );
    } catch (err) {
      if (mine === generation) fail(err);
    } finally {
      if (mine === generation) state().setLedgerLoading('idle');
    }
  };

  const showEntry = async (seq: number, kind: 'bad' | 'link' = 'bad') => {
    const mine = ++generation;
    const s = state();
    loadedWith = JSON.stringify({});
    s.setLedgerFilters(NO_LEDGER_FILTERS);
    s.setLedgerFocus(seq, kind);
    s.openLedgerEntry(seq);
    s.setLedgerLoading('first');
    try {
      // A few newer entries above it for context, then it, then a page's worth of older ones.
      const above = 10;
      const size = (await client.call('ledger.summary', {})).size;
      if (mine !== generation) return;
      const top = Math.min(size, seq + above);
      const window = await client.call('ledger.entries', { beforeSeq: top + 1, limit: PAGE });
      if (mine !== generation) return;
      state().setLedgerList(window.entries, window.nextBeforeSeq, top >= size ? null : top);
    } catch (err) {
      if (mine === generation) fail(err);
    } finally {
      if (mine === generation) state().setLedgerLoading('idle');
    }
  };

  /** A deep link that arrived before the link was open. */
  let waiting: number | null = null;
  const jumpTo = (seq: number) => {
    if (state().link === 'open') void showEntry(seq, 'link');
    else waiting = seq;
  };
  const linkOpened = () => {
    const seq = waiting;
    waiting = null;
    return seq !== null ? showEntry(seq, 'link') : reload();
  };

  const verify = async () => {
    if (state().ledgerVerify.phase === 'running') return;
    const jobId = `v${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    state().setLedgerVerify({ phase: 'running', jobId, done: 0, total: state().ledgerSummary?.size ?? 0 });
    state().setLedgerFocus(null);
    const off = client.on('ledger.verify.progress', (p) => {
      const v = state().ledgerVerify;
      if (p.jobId === jobId && v.phase === 'running') state().setLedgerVerify({ ...v, done: p.done, total: p.total });
    });
    try {
      const outcome = await client.call('ledger.verify', { jobId });
      state().setLedgerVerify({ phase: 'done', outcome });
      if (outcome.firstBad) await showEntry(outcome.firstBad.seq);
    } catch (err) {
      state().setLedgerVerify({ phase: 'error', error: toErrorInfo(err) });
    } finally {
      off();
    }
  };

  const dismissExport = () => {
    const e = state().ledgerExport;
    if (e.phase === 'done') {
      URL.revokeObjectURL(e.jsonUrl);
      URL.revokeObjectURL(e.htmlUrl);
    }
    state().setLedgerExport({ phase: 'idle' });
  };

  /**
   * The exported sandbox's kept resource history, drawn on the report's timeline. A report without
   * it is still whole (it says it has no samples), so a door that keeps no history is no failure.
   */
  const historyOf = async (sandboxId: string | undefined): Promise<ReportSample[]> => {
    if (!sandboxId || !/^[0-9a-f]{64}$/.test(sandboxId)) return [];
    try {
      const maxPoints = Math.min(MAX_HISTORY_POINTS, REPORT_MAX_SAMPLES);
      return reportSamplesFromHistory(await client.call('stats.history', { sandboxId, maxPoints }));
    } catch {
      return [];
    }
  };

  const exportReport = async (scope: LedgerExportScope) => {
    dismissExport();
    state().setLedgerExport({ phase: 'running' });
    try {
      const samples = await historyOf(scope.sandboxId);
      const r = await client.call('ledger.export', samples.length ? { ...scope, samples } : scope);
      const jsonUrl = URL.createObjectURL(new Blob([r.json], { type: 'application/json' }));
      const htmlUrl = URL.createObjectURL(new Blob([r.html], { type: 'text/html' }));
      state().setLedgerExport({
        phase: 'done',
        result: { jsonName: r.jsonName, htmlName: r.htmlName, entries: r.entries },
        scope,
        jsonUrl,
        htmlUrl,
      });
      download(jsonUrl, r.jsonName);
      download(htmlUrl, r.htmlName);
    } catch (err) {
      state().setLedgerExport({ phase: 'error', error: toErrorInfo(err) });
    }
  };

  return {
    filtersChanged: () => {
      if (JSON.stringify(params()) !== loadedWith) void reload();
    },
    reload,
    refresh,
    loadOlder,
    loadNewer,
    backToNewest: reload,
    showEntry,
    jumpTo,
    linkOpened,
    verify,
    exportReport,
    dismissExport,
  };
}

/** Saves a blob: URL under a name (an <a download>: no navigation, allowed by the renderer's CSP). */
function download(url: string, name: string): void {
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
}
