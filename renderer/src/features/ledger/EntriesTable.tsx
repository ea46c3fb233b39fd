// The entries, newest first: one line each, the details of one at a time, older pages as the list is
// scrolled to its end (or with the button). Everything from a payload is shown as text.
import { memo, useEffect, useRef } from 'react';
import type { LedgerEntry } from '../../../../shared/types/ledger.js';
import { useStore } from '../../store/index.js';
import { hasLedgerFilters } from '../../store/ledger-slice.js';
import type { LedgerController } from '../../live/ledger-controller.js';
import { useRovingRows } from '../../lib/roving-rows.js';
import { ProofPanel } from './ProofPanel.js';
import { formatCount, formatTime, payloadJson, shortHash, summarizePayload } from './ledger-format.js';

function runOf(e: LedgerEntry): string | null {
  const run = e.payload !== null && typeof e.payload === 'object' ? (e.payload as Record<string, unknown>).runId : undefined;
  return typeof run === 'string' ? run : null;
}

function Details({ entry, bad }: { entry: LedgerEntry; bad: boolean }) {
  const set = useStore((s) => s.setLedgerFilters);
  const sandboxName = useStore((s) => (entry.sandboxId ? s.sandboxes[entry.sandboxId]?.name : undefined));
  const run = runOf(entry);
  return (
    <tr className={`ledger-details${bad ? ' bad' : ''}`} data-testid="ledger-details" data-seq={entry.seq}>
      <td colSpan={6}>
        <dl className="ledger-hashes">
          <dt>Time</dt>
          <dd className="mono">{entry.time}</dd>
          <dt>Sandbox</dt>
          <dd className="mono">
            {entry.sandboxId ?? '–'}
            {sandboxName ? <span className="muted"> ({sandboxName})</span> : null}
          </dd>
          <dt>Hash</dt>
          <dd className="mono" data-testid="ledger-hash">
            {entry.hash}
          </dd>
          <dt>Prev hash</dt>
          <dd className="mono">{entry.prevHash}</dd>
        </dl>
        <ProofPanel entry={entry} />
        {/* A long payload scrolls: a tab stop, so the keyboard can scroll it too. */}
        <pre className="ledger-payload" data-testid="ledger-payload" tabIndex={0} aria-label="Payload">
          {payloadJson(entry.payload)}
        </pre>
        <div className="actions">
          {entry.sandboxId ? (
            <button type="button" className="btn small" onClick={() => set({ sandbox: entry.sandboxId ?? '' })}>
              Only this sandbox
            </button>
          ) : null}
          {run ? (
            <button type="button" className="btn small" onClick={() => set({ runId: run })}>
              Only this run
            </button>
          ) : null}
          <button type="button" className="btn small" onClick={() => set({ kind: entry.kind })}>
            Only {entry.kind}
          </button>
        </div>
      </td>
    </tr>
  );
}

const Row = memo(function Row({ entry, open, bad, linked }: { entry: LedgerEntry; open: boolean; bad: boolean; linked: boolean }) {
  const toggle = useStore((s) => s.openLedgerEntry);
  const sandboxName = useStore((s) => (entry.sandboxId ? s.sandboxes[entry.sandboxId]?.name : undefined));
  const summary = summarizePayload(entry.payload);
  const click = () => toggle(open ? null : entry.seq);
  return (
    <>
      <tr
        className={`row ledger-row${open ? ' open' : ''}${bad ? ' bad' : ''}${linked ? ' linked' : ''}`}
        data-testid="ledger-row"
        data-seq={entry.seq}
        data-kind={entry.kind}
        data-bad={bad ? 'true' : undefined}
        data-linked={linked ? 'true' : undefined}
        onClick={click}
        onKeyDown={(e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            click();
          }
        }}
      >
        <td className="mono seq">
          {/* A row of a table cannot carry aria-expanded: this disclosure says it (the row's Enter and click toggle). */}
          <button type="button" className="disclosure" tabIndex={-1} aria-expanded={open} aria-label={`Entry ${entry.seq} details`}>
            {open ? '▾' : '▸'}
          </button>
          {entry.seq}
        </td>
        <td className="mono" title={entry.time}>
          {formatTime(entry.time)}
        </td>
        <td title={entry.actor}>{entry.actor}</td>
        <td className="mono" title={entry.sandboxId ? (sandboxName ? `${sandboxName} (${entry.sandboxId})` : entry.sandboxId) : ''}>
          {entry.sandboxId ? (sandboxName ?? shortHash(entry.sandboxId, 12)) : <span className="muted">–</span>}
        </td>
        <td title={entry.kind}>
          <span className={`kind kind-${entry.kind.split('.')[0]}`}>{entry.kind}</span>
        </td>
        <td className="summary" title={summary}>
          {summary}
        </td>
      </tr>
      {open ? <Details entry={entry} bad={bad} /> : null}
    </>
  );
});

export function EntriesTable({ ctl }: { ctl: LedgerController }) {
  const entries = useStore((s) => s.ledgerEntries);
  const open = useStore((s) => s.ledgerOpen);
  const focus = useStore((s) => s.ledgerFocus);
  const focusKind = useStore((s) => s.ledgerFocusKind);
  const nextBefore = useStore((s) => s.ledgerNextBefore);
  const windowTop = useStore((s) => s.ledgerWindowTop);
  const loading = useStore((s) => s.ledgerLoading);
  const loaded = useStore((s) => s.ledgerLoaded);
  const filtered = useStore((s) => hasLedgerFilters(s.ledgerFilters));
  const scroller = useRef<HTMLDivElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const roving = useRovingRows<HTMLTableSectionElement>('tr[data-testid="ledger-row"]');

  // Infinite scroll: the next older page when the end of the list comes into view.
  useEffect(() => {
    const root = scroller.current;
    const end = sentinel.current;
    if (!root || !end || nextBefore === null) return;
    const seen = new IntersectionObserver(
      (items) => {
        if (items.some((i) => i.isIntersecting)) void ctl.loadOlder();
      },
      { root, rootMargin: '200px' },
    );
    seen.observe(end);
    return () => seen.disconnect();
  }, [ctl, nextBefore, entries.length]);

  // The entry to look at (a failed verification's first bad entry): bring it into view once loaded.
  const focusLoaded = focus !== null && entries.some((e) => e.seq === focus);
  useEffect(() => {
    if (!focusLoaded) return;
    scroller.current?.querySelector(`tr[data-seq="${focus}"]`)?.scrollIntoView({ block: 'center' });
  }, [focus, focusLoaded]);

  if (loaded && entries.length === 0 && loading === 'idle') {
    return (
      <div className="empty" data-testid="ledger-empty">
        {filtered ? <p>No entries match these filters.</p> : <p>The ledger is empty: nothing has been done yet.</p>}
      </div>
    );
  }
  return (
    <div className="ledger-scroll" ref={scroller}>
      {windowTop !== null ? (
        <div className="ledger-window" data-testid="ledger-window">
          <span>Showing entries up to #{formatCount(windowTop)}; newer ones are not loaded.</span>
          <button type="button" className="btn small" disabled={loading !== 'idle'} onClick={() => void ctl.loadNewer()}>
            Newer
          </button>
          <button type="button" className="btn small" disabled={loading !== 'idle'} onClick={() => void ctl.backToNewest()}>
            Back to the newest
          </button>
        </div>
      ) : null}
      <table className="table ledger-table" data-testid="ledger-table">
        <thead>
          <tr>
            <th>Seq</th>
            <th>Time</th>
            <th>Actor</th>
            <th>Sandbox</th>
            <th>Kind</th>
            <th>Payload</th>
          </tr>
        </thead>
        <tbody ref={roving.ref} onKeyDown={roving.onKeyDown}>
          {entries.map((e) => (
            <Row
              key={e.seq}
              entry={e}
              open={open === e.seq}
              bad={focus === e.seq && focusKind === 'bad'}
              linked={focus === e.seq && focusKind === 'link'}
            />
          ))}
        </tbody>
      </table>
      <div className="ledger-more" ref={sentinel}>
        {loading === 'first' ? (
          <span className="muted">Loading…</span>
        ) : nextBefore !== null ? (
          <button
            type="button"
            className="btn small"
            disabled={loading !== 'idle'}
            onClick={() => void ctl.loadOlder()}
            data-testid="ledger-older"
          >
            {loading === 'older' ? 'Loading…' : 'Older entries'}
          </button>
        ) : loaded ? (
          <span className="muted">{filtered ? 'No older matching entries.' : 'The first entry of the ledger.'}</span>
        ) : null}
      </div>
    </div>
  );
}
