// The ledger view's data: a first load as soon as the link opens (the ledger needs no Podman, so
// this does not wait for the engine), pushed appends applied to the list, and a re-read of the
// summary and the newest entries every few seconds while the view is shown (the CLI and other
// processes append too, and their entries are not pushed). The view's actions are in
// ledger-controller.ts. Deep links (#ledger?seq=N) are followed here too.
import type { LedgerEntry } from '../../../shared/types/ledger.js';
import type { WardenClient } from '../api/client.js';
import type { Store } from '../store/index.js';
import { ledgerEntryMatches, ledgerRequest } from '../store/ledger-slice.js';
import { ledgerController } from './ledger-controller.js';
import { parseLedgerLink } from '../features/ledger/ledger-link.js';

/** How often the summary and the newest entries are re-read while the view is shown. */
const REFRESH_MS = 5000;
/** Filter typing settles before the list is asked for again. */
const FILTER_DEBOUNCE_MS = 250;
/** Pushed appends are applied together, at most this often (an agent can append hundreds a second). */
const APPEND_BATCH_MS = 100;

export function startLedgerSync(client: WardenClient, store: Store): { snapshot(): Promise<void>; stop(): void } {
  const state = () => store.getState();
  const ctl = ledgerController(client, store);
  let pending: LedgerEntry[] = [];
  let flushTimer: number | null = null;
  let filterTimer: number | null = null;

  const flush = () => {
    flushTimer = null;
    const batch = pending;
    pending = [];
    const s = state();
    const last = batch[batch.length - 1];
    if (!last) return;
    if (s.ledgerSummary) {
      const kinds = new Set(s.ledgerSummary.kinds);
      const actors = new Set(s.ledgerSummary.actors);
      for (const e of batch) {
        kinds.add(e.kind);
        actors.add(e.actor);
      }
      s.setLedgerSummary({
        ...s.ledgerSummary,
        size: Math.max(s.ledgerSummary.size, last.seq),
        headHash: last.seq >= s.ledgerSummary.size ? last.hash : s.ledgerSummary.headHash,
        kinds: [...kinds].sort(),
        actors: [...actors].sort(),
      });
    }
    if (!s.ledgerLoaded || s.ledgerWindowTop !== null) return;
    const p = ledgerRequest(s);
    s.prependLedger(
      batch.filter((e) => ledgerEntryMatches(e, p)),
      null,
    );
  };

  const offs = [
    client.onLink((link) => {
      if (link === 'open') void ctl.linkOpened();
    }),
    client.on('ledger.appended', (entry) => {
      pending.push(entry);
      flushTimer ??= window.setTimeout(flush, APPEND_BATCH_MS);
    }),
    // New filters: a new list, once typing settles.
    store.subscribe((s, prev) => {
      if (s.ledgerFilters === prev.ledgerFilters) return;
      if (filterTimer !== null) clearTimeout(filterTimer);
      filterTimer = window.setTimeout(() => {
        filterTimer = null;
        ctl.filtersChanged();
      }, FILTER_DEBOUNCE_MS);
    }),
  ];
  // Deep links (#ledger?seq=N, from the timelines or pasted): open the entry, then take the address
  // back to plain so the same link followed again is a new hashchange.
  const follow = () => {
    const seq = parseLedgerLink(location.hash);
    if (seq === null) return;
    history.replaceState(null, '', location.pathname + location.search);
    state().navigate({ name: 'ledger' });
    ctl.jumpTo(seq);
  };
  follow();
  window.addEventListener('hashchange', follow);
  offs.push(() => window.removeEventListener('hashchange', follow));
  const timer = window.setInterval(() => {
    const s = state();
    if (s.link === 'open' && s.view.name === 'ledger' && s.ledgerLoading === 'idle' && document.visibilityState !== 'hidden')
      void ctl.refresh();
  }, REFRESH_MS);

  return {
    // sync.ts calls this after every engine (re)connect; the list was loaded on link open already.
    snapshot: () => ctl.refresh(),
    stop: () => {
      for (const off of offs) off();
      clearInterval(timer);
      if (flushTimer !== null) clearTimeout(flushTimer);
      if (filterTimer !== null) clearTimeout(filterTimer);
    },
  };
}
