// Roving focus for a table's rows (the WAI-ARIA grid pattern, one row as the unit): one Tab stop for
// the whole list, the arrow keys (and Home/End) move between rows. The tabindex values are set on the
// DOM after each render rather than as React props, so a memoised row never has to re-render just
// because focus moved to another one.
import { useLayoutEffect, useRef, type KeyboardEvent, type RefObject } from 'react';

const MOVES: Record<string, (index: number, count: number) => number> = {
  ArrowDown: (i, n) => Math.min(n - 1, i + 1),
  ArrowUp: (i) => Math.max(0, i - 1),
  Home: () => 0,
  End: (_, n) => n - 1,
};

export function useRovingRows<T extends HTMLElement>(
  selector: string,
): { ref: RefObject<T | null>; onKeyDown: (e: KeyboardEvent<T>) => void } {
  const ref = useRef<T>(null);
  // After every render (rows come and go): exactly one row is the list's Tab stop.
  useLayoutEffect(() => {
    const rows = ref.current ? [...ref.current.querySelectorAll<HTMLElement>(selector)] : [];
    const stop = rows.find((r) => r.getAttribute('tabindex') === '0') ?? rows[0];
    for (const r of rows) r.setAttribute('tabindex', r === stop ? '0' : '-1');
  });
  const onKeyDown = (e: KeyboardEvent<T>) => {
    const move = MOVES[e.key];
    const target = e.target as HTMLElement;
    if (!move || !ref.current || !target.matches(selector)) return;
    const rows = [...ref.current.querySelectorAll<HTMLElement>(selector)];
    const next = rows[move(rows.indexOf(target), rows.length)];
    e.preventDefault();
    if (!next || next === target) return;
    target.setAttribute('tabindex', '-1');
    next.setAttribute('tabindex', '0');
    next.focus();
    next.scrollIntoView({ block: 'nearest' });
  };
  return { ref, onKeyDown };
}
