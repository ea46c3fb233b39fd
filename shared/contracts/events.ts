// Events pushed from the engine to every subscriber (UI, followers). One map, typed payloads.
import type { ConnectionStatus, EngineEvent } from '../types/engine.js';
import type { StatsSample } from '../types/stats.js';

export interface EventMap {
  'engine.status': { status: ConnectionStatus };
  'sandbox.event': EngineEvent;
  /** The engine stream was re-opened after a gap: take a fresh snapshot. */
  'sandbox.resync': Record<string, never>;
  'stats.sample': StatsSample;
  /** Terminal output for a UI connection, batched (a few ms) and decoded as UTF-8. */
  'terminal.data': { id: string; data: string };
  'terminal.exit': { id: string; code: number | null };
}

export type EventName = keyof EventMap;

/** One pushed event as it crosses IPC or the web shell's socket. */
export type EventMessage = { [E in EventName]: { event: E; payload: EventMap[E] } }[EventName];
