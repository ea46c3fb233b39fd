// What a UI door needs of the engine: the engine when there is one, the gateway (runs, approvals),
// the ledger view, and their pushed events. The web shell has one engine for its whole life; the
// Electron main process may still be waiting for Podman, so it relays events across engines it
// opens later.
import { WardenError } from '../../../shared/errors.js';
import type { EventMap, EventName } from '../../../shared/contracts/events.js';
import type { WardenEngine } from '../../engine/engine.js';
import type { Gateway } from '../../engine/gateway/gateway.js';
import type { LedgerView } from '../../engine/ledger/ledger-view.js';

export interface EngineSource {
  /** The engine, or throws E_ENGINE_UNREACHABLE (with what to do) while there is none. */
  current(): WardenEngine;
  /** The agent gateway of the current engine (same errors as current()). */
  gateway(): Gateway;
  /** The ledger view, or throws E_LEDGER when this door runs without the ledger. */
  ledgerView(): LedgerView;
  on<E extends EventName>(event: E, fn: (payload: EventMap[E]) => void): () => void;
}

export function fixedEngine(engine: WardenEngine, gateway: Gateway, ledgerView: LedgerView | null): EngineSource {
  return {
    current: () => engine,
    gateway: () => gateway,
    ledgerView: () => {
      if (!ledgerView) throw new WardenError('E_LEDGER', 'this Warden runs without its ledger', 'start it with the ledger of WARDEN_HOME (`warden serve`)');
      return ledgerView;
    },
    on: (event, fn) => engine.events.on(event, fn),
  };
}

export function noEngineYet(reason: string, hint?: string): WardenError {
  return new WardenError('E_ENGINE_UNREACHABLE', reason, hint ?? 'start Podman (`podman system service --time=0 &`) or run `warden doctor`');
}
