import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';

export type View = { name: 'sandboxes' } | { name: 'sandbox'; id: string } | { name: 'runs' } | { name: 'ledger' };

export type Dialog = { kind: 'create' } | { kind: 'destroy'; id: string } | null;

export interface Toast {
  id: number;
  kind: 'error' | 'info';
  text: string;
  hint?: string;
}

export interface UiSlice {
  view: View;
  dialog: Dialog;
  toasts: Toast[];
  /** Modal dialogs open now (the page behind them is inert; approvals then show above them). */
  modals: number;
  modalOpened(): void;
  modalClosed(): void;
  navigate(view: View): void;
  openDialog(dialog: Dialog): void;
  toast(kind: Toast['kind'], text: string, hint?: string): void;
  dismissToast(id: number): void;
}

let nextToast = 1;

export const createUiSlice: StateCreator<AppState, [], [], UiSlice> = (set, get) => ({
  view: { name: 'sandboxes' },
  dialog: null,
  toasts: [],
  modals: 0,
  modalOpened: () => set((s) => ({ modals: s.modals + 1 })),
  modalClosed: () => set((s) => ({ modals: Math.max(0, s.modals - 1) })),
  navigate: (view) => set({ view }),
  openDialog: (dialog) => set({ dialog }),
  toast: (kind, text, hint) => {
    const id = nextToast++;
    set((s) => ({ toasts: [...s.toasts.slice(-4), hint === undefined ? { id, kind, text } : { id, kind, text, hint }] }));
    setTimeout(() => get().dismissToast(id), kind === 'error' ? 10_000 : 4000);
  },
  dismissToast: (id) => set((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) })),
});
