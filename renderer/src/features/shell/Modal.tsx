// A modal dialog: focus moves in and Tab cycles inside it, Escape closes, focus goes back where it
// was (or to the view's heading when that is gone, e.g. the destroyed sandbox's button); the page
// behind is inert while it is open (except pending approvals, which move above the dialog: an agent
// waiting on a person is never hidden).
import { useEffect, useRef, type ReactNode } from 'react';
import { useStore } from '../../store/index.js';

const FOCUSABLE =
  'input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled]), a[href], [tabindex="0"]';

/** Tab from the last control goes to the first, Shift+Tab from the first to the last. */
function trapTab(e: React.KeyboardEvent<HTMLDivElement>): void {
  const items = [...e.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)];
  const first = items[0];
  const last = items[items.length - 1];
  if (!first || !last) return;
  const at = document.activeElement;
  if (e.shiftKey && (at === first || at === e.currentTarget)) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && at === last) {
    e.preventDefault();
    first.focus();
  }
}

function returnFocus(previous: HTMLElement | null): void {
  if (previous?.isConnected) return previous.focus();
  const heading = document.querySelector<HTMLElement>('#app-shell main h1');
  if (!heading) return;
  heading.tabIndex = -1;
  heading.focus();
}

interface Props {
  title: string;
  onClose(): void;
  children: ReactNode;
  testId?: string;
  wide?: boolean;
}

export function Modal({ title, onClose, children, testId, wide }: Props) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    box.current?.querySelector<HTMLElement>('input, select, textarea, button')?.focus();
    const app = document.getElementById('app-shell');
    app?.setAttribute('inert', '');
    useStore.getState().modalOpened();
    return () => {
      useStore.getState().modalClosed();
      app?.removeAttribute('inert');
      // After React has put the view back (a destroy navigates away in the same update).
      setTimeout(() => returnFocus(previous));
    };
  }, []);
  return (
    <div
      className="overlay"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) onClose();
      }}
    >
      <div
        ref={box}
        className={`modal${wide ? ' wide' : ''}`}
        role="dialog"
        aria-modal="true"
        aria-label={title}
        data-testid={testId}
        tabIndex={-1}
        onKeyDown={(e) => {
          if (e.key === 'Escape') onClose();
          if (e.key === 'Tab') trapTab(e);
        }}
      >
        <h2>{title}</h2>
        {children}
      </div>
    </div>
  );
}
