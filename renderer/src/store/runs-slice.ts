// Agents' runs, their tool calls and pending approvals, as pushed by the gateway.
// (Filled in by the Runs view work: keep this slice's state and actions here.)
import type { StateCreator } from 'zustand';
import type { AppState } from './index.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface RunsSlice {}

export const createRunsSlice: StateCreator<AppState, [], [], RunsSlice> = () => ({});
