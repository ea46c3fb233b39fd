// The sandboxes as the engine lists them, kept by id; the list's load error; actions in flight; the warm count.
import type { StateCreator } from 'zustand';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { ErrorInfo } from '../../../shared/errors.js';
import type { AppState } from './index.js';

export interface SandboxesSlice {
  sandboxes: Record<string, SandboxInfo>;
  /** True once the first snapshot arrived. */
  sandboxesLoaded: boolean;
  /** Why the last list failed (Podman did not answer it, say): shown with a retry instead of "loading…". */
  sandboxesError: ErrorInfo | null;
  /** Actions in flight per sandbox id ("stopping" …), to disable buttons and say so. */
  busy: Record<string, string>;
  /** Warm-pool sandboxes ready to be claimed: counted here, never listed (they are no one's yet). */
  warm: number;
  setWarm(count: number): void;
  setSandboxes(list: SandboxInfo[]): void;
  setSandboxesError(error: ErrorInfo | null): void;
  upsertSandbox(info: SandboxInfo): void;
  removeSandbox(id: string): void;
  setBusy(id: string, what: string | null): void;
}

export const createSandboxesSlice: StateCreator<AppState, [], [], SandboxesSlice> = (set) => ({
  sandboxes: {},
  sandboxesLoaded: false,
  sandboxesError: null,
  busy: {},
  warm: 0,
  setWarm: (count) => set({ warm: count }),
  setSandboxes: (list) => set({ sandboxes: Object.fromEntries(list.map((s) => [s.id, s])), sandboxesLoaded: true, sandboxesError: null }),
  setSandboxesError: (error) => set({ sandboxesError: error }),
  upsertSandbox: (info) => set((s) => ({ sandboxes: { ...s.sandboxes, [info.id]: info } })),
  removeSandbox: (id) =>
    set((s) => {
      if (!(id in s.sandboxes)) return s;
      const { [id]: _gone, ...rest } = s.sandboxes;
      return { sandboxes: rest };
    }),
  setBusy: (id, what) =>
    set((s) => {
      const { [id]: _prev, ...rest } = s.busy;
      return { busy: what ? { ...rest, [id]: what } : rest };
    }),
});
