// What a UI door needs of the engine: the engine when there is one, and its pushed events. The
// web shell has one engine for its whole life; the Electron main process may still be waiting for
// Podman, so it relays events across engines it opens later.
import { WardenError } from '../../../shared/errors.js';
import type { EventMap, EventName } from '../../../shared/contracts/events.js';
import type { WardenEngine } from '../../engine/engine.js';

export interface EngineSource {
  /** The engine, or throws E_ENGINE_UNREACHABLE (with what to do) while there is none. */
  current(): WardenEngine;
  on<E extends EventName>(event: E, fn: (payload: EventMap[E]) => void): () => void;
}

export function fixedEngine(engine: WardenEngine): EngineSource {
  return {
    current: () => engine,
    on: (event, fn) => engine.events.on(event, fn),
  };
}

export function noEngineYet(reason: string, hint?: string): WardenError {
  return new WardenError('E_ENGINE_UNREACHABLE', reason, hint ?? 'start Podman (`podman system service --time=0 &`) or run `warden doctor`');
}
