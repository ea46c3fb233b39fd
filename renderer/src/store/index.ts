// One zustand store made of slices (zustand's slices pattern). Pushed events are applied with
// getState/setState outside React by live/sync.ts; components select what they show.
import { create } from 'zustand';
import { createEngineSlice, type EngineSlice } from './engine-slice.js';
import { createSandboxesSlice, type SandboxesSlice } from './sandboxes-slice.js';
import { createUiSlice, type UiSlice } from './ui-slice.js';
import { createRunsSlice, type RunsSlice } from './runs-slice.js';
import { createLedgerSlice, type LedgerSlice } from './ledger-slice.js';

export type AppState = EngineSlice & SandboxesSlice & UiSlice & RunsSlice & LedgerSlice;

export const useStore = create<AppState>()((...a) => ({
  ...createEngineSlice(...a),
  ...createSandboxesSlice(...a),
  ...createUiSlice(...a),
  ...createRunsSlice(...a),
  ...createLedgerSlice(...a),
}));

export type Store = typeof useStore;
