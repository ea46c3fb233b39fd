// The engine events every UI connection follows, written once for both UI doors: UiSession forwards
// them to each window or browser socket, and the app's EngineHost relays them across the engines it
// opens. Stats samples, terminal output and verify progress are per connection, not in this list.
import type { EventName } from '../../shared/contracts/events.js';

export const UI_EVENTS: readonly EventName[] = [
  'engine.status',
  'sandbox.event',
  'sandbox.resync',
  'sandbox.attested',
  'run.updated',
  'run.call',
  'run.output',
  'approval.requested',
  'approval.decided',
  'ledger.appended',
];

/**
 * What a door that swaps engines relays from each engine to its own bus: the UI events but the
 * ledger's (the ledger outlives the engines and announces its appends itself), and the stats
 * samples its StatsHub shares out per connection.
 */
export const ENGINE_RELAYED: readonly EventName[] = [...UI_EVENTS.filter((e) => e !== 'ledger.appended'), 'stats.sample'];
