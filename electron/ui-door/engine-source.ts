// What a UI door needs of the engine: the engine when there is one, the gateway (runs, approvals),
// the ledger's reader, and their pushed events. The web shell has one engine for its whole life; the
// Electron main process may still be waiting for Podman, so it relays events across engines it
// opens later.
import { WardenError } from '../../shared/errors.js';
import type { EventMap, EventName } from '../../shared/contracts/events.js';
import type { WardenEngine } from '../engine/engine.js';
import type { Gateway } from '../engine/gateway/gateway.js';
import type { LedgerReader } from '../engine/ledger/ledger-reader.js';

export interface EngineSource {
  /** The engine, or throws E_ENGINE_UNREACHABLE (with what to do) while there is none. */
  current(): WardenEngine;
  /** The agent gateway of the current engine (same errors as current()). */
  gateway(): Gateway;
  /** The ledger's reader (the ledger view's pages, summary, verification, export). */
  ledgerReader(): LedgerReader;
  on<E extends EventName>(event: E, fn: (payload: EventMap[E]) => void): () => void;
}

export function fixedEngine(engine: WardenEngine, gateway: Gateway, ledgerReader: LedgerReader): EngineSource {
  return {
    current: () => engine,
    gateway: () => gateway,
    ledgerReader: () => ledgerReader,
    on: (event, fn) => engine.events.on(event, fn),
  };
}

export function noEngineYet(reason: string, hint?: string): WardenError {
  return new WardenError(
    'E_ENGINE_UNREACHABLE',
    reason,
    hint ?? 'start Podman (`podman system service --time=0 &`) or run `warden doctor`',
  );
}
