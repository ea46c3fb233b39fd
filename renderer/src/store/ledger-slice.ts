// The ledger view's state: filters, the loaded page, the summary and the last verification.
// (Filled in by the Ledger view work: keep this slice's state and actions here.)
import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface LedgerSlice {}

export const createLedgerSlice: StateCreator<AppState, [], [], LedgerSlice> = () => ({});
