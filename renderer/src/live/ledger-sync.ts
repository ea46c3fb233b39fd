// Applies pushed ledger events (appended entries, verify progress) to the store.
// (Filled in by the Ledger view work.) Called on every (re)connect snapshot and once at start.
import type { WardenClient } from '../api/client.js';
import type { Store } from '../store/index.js';

export function startLedgerSync(_client: WardenClient, _store: Store): { snapshot(): Promise<void>; stop(): void } {
  return { snapshot: async () => undefined, stop: () => undefined };
}
