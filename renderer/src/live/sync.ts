// The event bridge: a snapshot on every (re)connect, then pushed events applied to the store with
// getState outside React. Stats and terminal bytes bypass the store for their transient sinks.
import { toErrorInfo } from '../../../shared/errors.js';
import type { EngineEvent } from '../../../shared/types/engine.js';
import type { WardenClient } from '../api/client.js';
import type { Store } from '../store/index.js';
import type { StatsBuffer } from './stats-buffer.js';
import type { TerminalStreams } from './terminal-streams.js';
import { startRunsSync } from './runs-sync.js';
import { startLedgerSync } from './ledger-sync.js';
import { loadSandboxList } from './sandbox-list-load.js';
import { inspectInto, type InspectRows } from './inspect-answers.js';

/** Engine events for one sandbox often come in bursts (create, start …): one inspect per burst. */
const COALESCE_MS = 40;

export function startSync(client: WardenClient, store: Store, stats: StatsBuffer, terminals: TerminalStreams): () => void {
  const state = () => store.getState();
  let generation = 0;
  const pendingInspect = new Map<string, number>();
  const runs = startRunsSync(client, store);
  const ledger = startLedgerSync(client, store);

  const engineSnapshot = async (mine: number) => {
    try {
      const info = await client.call('engine.info', {});
      if (mine !== generation) return;
      state().setEngine(info.status, info);
      await loadSandboxList(client, store, () => mine === generation);
      if (mine !== generation) return;
      await refreshPool(mine);
    } catch (err) {
      if (mine !== generation) return;
      const info = toErrorInfo(err);
      if (info.code === 'E_ENGINE_UNREACHABLE') state().setEngine('unreachable', undefined, info);
      else state().toast('error', info.message, info.hint);
    }
  };

  // The pool's sandboxes come and go with engine events of their own (fill, claim, sweep) and
  // attestations: its count is asked again after a burst of them, never polled.
  let poolTimer: number | undefined;
  const refreshPool = async (mine = generation) => {
    const status = await client.call('pool.status', {});
    if (mine === generation) state().setWarm(status.ready);
  };
  const poolChanged = () => {
    if (poolTimer !== undefined) clearTimeout(poolTimer);
    poolTimer = window.setTimeout(() => {
      poolTimer = undefined;
      refreshPool().catch(() => undefined);
    }, COALESCE_MS);
  };

  /** Runs and the ledger need no Podman: they load beside the engine's part, not after it. */
  const sideSnapshot = async (load: () => Promise<void>) => {
    try {
      await load();
    } catch (err) {
      const info = toErrorInfo(err);
      state().toast('error', info.message, info.hint);
    }
  };

  const snapshot = async () => {
    const mine = ++generation;
    await Promise.all([engineSnapshot(mine), sideSnapshot(runs.snapshot), sideSnapshot(ledger.snapshot)]);
  };

  const refresh = (event: EngineEvent) => {
    poolChanged();
    if (event.kind === 'remove') {
      const id = Object.keys(state().sandboxes).find((k) => k === event.sandboxId || k.startsWith(event.sandboxId));
      if (id) {
        state().removeSandbox(id);
        stats.forget(id);
      }
      return;
    }
    const prev = pendingInspect.get(event.sandboxId);
    if (prev !== undefined) clearTimeout(prev);
    pendingInspect.set(
      event.sandboxId,
      window.setTimeout(() => {
        pendingInspect.delete(event.sandboxId);
        void inspectInto(rows, event.sandboxId);
      }, COALESCE_MS),
    );
  };

  const rows: InspectRows = {
    ask: (id) => client.call('sandbox.inspect', { ref: id }),
    row: (id) => state().sandboxes[id],
    put: (info) => state().upsertSandbox(info),
    remove: (id) => state().removeSandbox(id),
  };

  // Stats follow the running sandboxes: one watch call whenever that set changes.
  let watched = '';
  const watchStats = () => {
    const s = state();
    if (s.link !== 'open') return;
    const ids = Object.values(s.sandboxes)
      .filter((x) => x.state === 'running')
      .map((x) => x.id)
      .sort();
    const key = ids.join(',');
    if (key === watched) return;
    watched = key;
    client.call('stats.watch', { ids }).catch(() => {
      watched = '';
    });
  };

  const offs = [
    client.onLink((link) => {
      state().setLink(link);
      if (link === 'open') {
        // The door forgot this connection's streams: ask again.
        watched = '';
        void snapshot().then(watchStats);
      }
    }),
    client.on('engine.status', ({ status }) => {
      state().setEngine(status);
      if (status === 'connected') {
        watched = '';
        void snapshot().then(watchStats);
      }
    }),
    client.on('sandbox.resync', () => void snapshot()),
    client.on('sandbox.event', refresh),
    // A pooled sandbox is offered once attested: the count changes then, with no engine event of its own.
    client.on('sandbox.attested', poolChanged),
    client.on('stats.sample', (sample) => stats.push(sample)),
    client.on('terminal.data', ({ id, data }) => terminals.data(id, data)),
    client.on('terminal.exit', ({ id, code }) => terminals.exit(id, code)),
    store.subscribe(watchStats),
  ];
  client.bridge.ready();

  return () => {
    for (const off of offs) off();
    runs.stop();
    ledger.stop();
    for (const t of pendingInspect.values()) clearTimeout(t);
    if (poolTimer !== undefined) clearTimeout(poolTimer);
  };
}
