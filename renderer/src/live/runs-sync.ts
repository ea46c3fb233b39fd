// Applies the gateway's pushed run, call, output and approval events to the store.
// (Filled in by the Runs view work.) Called on every (re)connect snapshot and once at start.
import type { WardenClient } from '../api/client.js';
import type { Store } from '../store/index.js';

export function startRunsSync(_client: WardenClient, _store: Store): { snapshot(): Promise<void>; stop(): void } {
  return { snapshot: async () => undefined, stop: () => undefined };
}
