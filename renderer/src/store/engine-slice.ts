import type { StateCreator } from 'zustand';
import type { ConnectionInfo, ConnectionStatus } from '../../../shared/types/engine.js';
import type { ErrorInfo } from '../../../shared/errors.js';
import type { LinkState } from '../../../shared/contracts/bridge.js';
import type { AppState } from './index.js';

export interface EngineSlice {
  /** The link to Warden itself (always open in Electron). */
  link: LinkState;
  /** Podman as the engine sees it; 'unknown' until the first answer. */
  engineStatus: ConnectionStatus | 'unknown';
  engineInfo: ConnectionInfo | null;
  /** Why the engine is not there, with what to do, from the last failed call. */
  engineError: ErrorInfo | null;
  setLink(link: LinkState): void;
  setEngine(status: ConnectionStatus | 'unknown', info?: ConnectionInfo | null, error?: ErrorInfo | null): void;
}

export const createEngineSlice: StateCreator<AppState, [], [], EngineSlice> = (set) => ({
  link: 'connecting',
  engineStatus: 'unknown',
  engineInfo: null,
  engineError: null,
  setLink: (link) => set({ link }),
  setEngine: (status, info, error) =>
    set((s) => ({
      engineStatus: status,
      engineInfo: info === undefined ? s.engineInfo : info,
      engineError: status === 'connected' ? null : error === undefined ? s.engineError : error,
    })),
});
