// The engine inside the Electron main process. Podman may not answer when the app starts; the
// window opens anyway, says so, and the host keeps trying, relaying events across engines.
import { EventBus } from '../engine/event-bus.js';
import type { EventName } from '../../shared/contracts/events.js';
import { toErrorInfo, type ErrorInfo } from '../../shared/errors.js';
import { ensureWardenHome } from '../engine/paths.js';
import { PodmanEngine } from '../engine/podman/podman-engine.js';
import { WardenEngine } from '../engine/engine.js';
import { openAuditLedger, type ClosableAuditSink } from '../engine/open-ledger.js';
import { noEngineYet, type EngineSource } from '../server/web-shell/engine-source.js';

const RELAYED: EventName[] = ['engine.status', 'sandbox.event', 'sandbox.resync', 'stats.sample'];
const MAX_RETRY_MS = 5000;

export class EngineHost implements EngineSource {
  private readonly bus = new EventBus();
  private engine: WardenEngine | null = null;
  private ledger: ClosableAuditSink | null = null;
  private lastError: ErrorInfo | null = null;
  private retryMs = 500;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly home = ensureWardenHome()) {}

  current(): WardenEngine {
    if (this.engine) return this.engine;
    throw noEngineYet(this.lastError ? `Podman is not reachable: ${this.lastError.message}` : 'connecting to Podman…', this.lastError?.hint);
  }

  on: EngineSource['on'] = (event, fn) => this.bus.on(event, fn);

  /** Opens the engine now, or keeps trying in the background. */
  async start(): Promise<void> {
    if (this.closed || this.engine) return;
    try {
      // Not detached: Warden's own Podman service (if it has to start one) ends with the app.
      const podman = await PodmanEngine.open({ home: this.home, detachedService: false });
      this.ledger = openAuditLedger(this.home);
      const engine = new WardenEngine(podman, this.ledger, { actor: 'user' });
      for (const event of RELAYED) engine.events.on(event, (payload) => this.bus.emit(event, payload as never));
      await engine.watch();
      if (this.closed) {
        engine.close();
        return;
      }
      this.engine = engine;
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
    this.engine?.close();
    this.ledger?.close();
    this.engine = null;
  }
}
