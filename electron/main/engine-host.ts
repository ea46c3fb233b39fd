// The engine inside the Electron main process. Podman may not answer when the app starts; the
// window opens anyway, says so, and the host keeps trying, relaying events across engines. The
// ledger opens at once (it needs no Podman), so the ledger view works while Podman is away.
import { EventBus } from '../engine/event-bus.js';
import { toErrorInfo, type ErrorInfo } from '../../shared/errors.js';
import { ensureWardenHome } from '../engine/paths.js';
import { PodmanEngine } from '../engine/podman/podman-engine.js';
import type { WardenEngine } from '../engine/engine.js';
import type { Gateway } from '../engine/gateway/gateway.js';
import type { LedgerReader } from '../engine/ledger/ledger-reader.js';
import { loadPolicy } from '../engine/gateway/policy-load.js';
import { openWardenEngine, openWardenLedger, type WardenLedger } from '../engine/open-warden.js';
import { noEngineYet, type EngineSource } from '../ui-door/engine-source.js';
import { ENGINE_RELAYED } from '../ui-door/ui-events.js';
import { closePool, openPool } from '../engine/pool/open-pool.js';
import type { WarmPool } from '../engine/pool/warm-pool.js';

const MAX_RETRY_MS = 5000;

export class EngineHost implements EngineSource {
  private readonly bus = new EventBus();
  /** Opened at once: the ledger needs no Podman. */
  private readonly half: WardenLedger;
  private engine: WardenEngine | null = null;
  private gw: Gateway | null = null;
  private pool: WarmPool | null = null;
  /** Windows that can answer approvals; each gateway is told while there is at least one. */
  private approvalWatchers = 0;
  private stopWatchingApprovals: (() => void) | null = null;
  private lastError: ErrorInfo | null = null;
  private retryMs = 500;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(readonly home = ensureWardenHome()) {
    this.half = openWardenLedger(home, { announce: (entry) => this.bus.emit('ledger.appended', entry) });
  }

  current(): WardenEngine {
    if (this.engine) return this.engine;
    throw noEngineYet(
      this.lastError ? `Podman is not reachable: ${this.lastError.message}` : 'connecting to Podman…',
      this.lastError?.hint,
    );
  }

  gateway(): Gateway {
    this.current();
    return this.gw!;
  }

  ledgerReader(): LedgerReader {
    return this.half.ledgerReader;
  }

  on: EngineSource['on'] = (event, fn) => this.bus.on(event, fn);

  /** A window that can put approvals before the user; returns its stop. */
  watchApprovals(): () => void {
    this.approvalWatchers++;
    if (this.approvalWatchers === 1 && this.gw) this.stopWatchingApprovals = this.gw.approvals.watch();
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.approvalWatchers--;
      if (this.approvalWatchers === 0) {
        this.stopWatchingApprovals?.();
        this.stopWatchingApprovals = null;
      }
    };
  }

  /** Opens the engine now, or keeps trying in the background. */
  async start(): Promise<void> {
    if (this.closed || this.engine) return;
    try {
      const policy = loadPolicy(this.home);
      // Not detached: Warden's own Podman service (if it has to start one) ends with the app.
      const podman = await PodmanEngine.open({ home: this.home, detachedService: false });
      const { engine, gateway } = openWardenEngine(this.half, podman, policy);
      for (const event of ENGINE_RELAYED) engine.events.on(event, (payload) => this.bus.emit(event, payload as never));
      await engine.watch();
      if (this.closed) {
        gateway.close();
        engine.close();
        return;
      }
      this.engine = engine;
      this.gw = gateway;
      // Off the window's path: adopting a pool left by the last run attests each sandbox again.
      void openPool(engine, this.half).then(
        (pool) => {
          if (this.closed) void closePool(engine, pool);
          else this.pool = pool;
        },
        (err: Error) => process.stderr.write(`warden: no warm pool: ${err.message}\n`),
      );
      if (this.approvalWatchers > 0) this.stopWatchingApprovals = gateway.approvals.watch();
      this.lastError = null;
      this.bus.emit('engine.status', { status: 'connected' });
    } catch (err) {
      this.lastError = toErrorInfo(err);
      this.bus.emit('engine.status', { status: 'unreachable' });
      this.timer = setTimeout(() => void this.start(), this.retryMs);
      this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.stopWatchingApprovals?.();
    this.gw?.close();
    // The pool is drained before the engine's connection goes; whatever a quitting app leaves is
    // adopted or swept at the next start (warm-pool.ts).
    const engine = this.engine;
    if (engine) void closePool(engine, this.pool).finally(() => engine.close());
    this.half.close();
    this.engine = null;
    this.gw = null;
  }
}
