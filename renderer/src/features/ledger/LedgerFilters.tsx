// Which entries the list shows: sandbox (a name or an id), run, kind and actor (menus of what the
// ledger holds), and a time window. The list follows as soon as typing settles.
import { useShallow } from 'zustand/react/shallow';
import { useStore } from '../../store/index.js';
import { hasLedgerFilters, NO_LEDGER_FILTERS, type LedgerFilters as Filters } from '../../store/ledger-slice.js';

/** One empty list for "no summary yet": a new [] per render would make the store selector loop. */
const NONE: string[] = [];

export function LedgerFilters() {
  const filters = useStore((s) => s.ledgerFilters);
  const set = useStore((s) => s.setLedgerFilters);
  const kinds = useStore((s) => s.ledgerSummary?.kinds ?? NONE);
  const actors = useStore((s) => s.ledgerSummary?.actors ?? NONE);
  const sandboxes = useStore(useShallow((s) => Object.values(s.sandboxes).map((x) => `${x.id}\u0000${x.name}`)));
  const text = (key: keyof Filters, label: string, placeholder: string, list?: string) => (
    <label className="ledger-filter">
      <span>{label}</span>
      <input
        type="text"
        name={key}
        value={filters[key]}
        placeholder={placeholder}
        list={list}
        spellCheck={false}
        autoComplete="off"
        onChange={(e) => set({ [key]: e.target.value })}
      />
    </label>
  );
  const menu = (key: 'kind' | 'actor', label: string, values: string[]) => (
    <label className="ledger-filter">
      <span>{label}</span>
      <select name={key} value={filters[key]} onChange={(e) => set({ [key]: e.target.value })}>
        <option value="">any</option>
        {/* A filter value the menu does not know (yet) stays selectable. */}
        {[...new Set([...values, ...(filters[key] ? [filters[key]] : [])])].map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
  const time = (key: 'since' | 'until', label: string) => (
    <label className="ledger-filter">
      <span>{label}</span>
      <input type="datetime-local" name={key} step={1} value={filters[key]} onChange={(e) => set({ [key]: e.target.value })} />
    </label>
  );
  return (
    <form className="ledger-filters" aria-label="Filter entries" data-testid="ledger-filters" onSubmit={(e) => e.preventDefault()}>
      {text('sandbox', 'Sandbox', 'name or id', 'ledger-sandboxes')}
      <datalist id="ledger-sandboxes">
        {sandboxes.map((pair) => {
          const [id, name] = pair.split('\u0000');
          return <option key={id} value={name} />;
        })}
      </datalist>
      {text('runId', 'Run', 'run id')}
      {menu('kind', 'Kind', kinds)}
      {menu('actor', 'Actor', actors)}
      {time('since', 'From')}
      {time('until', 'To')}
      <button type="button" className="btn ghost small" disabled={!hasLedgerFilters(filters)} onClick={() => set(NO_LEDGER_FILTERS)}>
        Clear
      </button>
    </form>
  );
}
