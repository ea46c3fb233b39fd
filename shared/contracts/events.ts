// Events pushed from the engine to every subscriber (UI, followers). One map, typed payloads.
import type { ConnectionStatus, EngineEvent } from '../types/engine.js';
import type { StatsSample } from '../types/stats.js';

export interface EventMap {
  'engine.status': { status: ConnectionStatus };
  'sandbox.event': EngineEvent;
  /** The engine stream was re-opened after a gap: take a fresh snapshot. */
  'sandbox.resync': Record<string, never>;
  'stats.sample': StatsSample;
}

export type EventName = keyof EventMap;
