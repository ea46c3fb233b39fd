// A modal dialog: focus moves in, Escape closes, the page behind is inert while it is open (except
// pending approvals, which move above the dialog: an agent waiting on a person is never hidden).
import { useEffect, useRef, type ReactNode } from 'react';
import { useStore } from '../../store/index.js';

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
      previous?.focus?.();
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
        onKeyDown={(e) => {
          if (e.key === 'Escape') onClose();
        }}
      >
        <h2>{title}</h2>
        {children}
      </div>
    </div>
  );
}
