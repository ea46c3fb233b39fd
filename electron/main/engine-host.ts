// The engine inside the Electron main process. Podman may not answer when the app starts; the
// window opens anyway, says so, and the host keeps trying, relaying events across engines. The
// ledger opens at once (it needs no Podman), so the ledger view works while Podman is away.
import { EventBus } from '../engine/event-bus.js';
import type { EventName } from '../../shared/contracts/events.js';
import { toErrorInfo, type ErrorInfo } from '../../shared/errors.js';
import { ensureWardenHome } from '../engine/paths.js';
import { PodmanEngine } from '../engine/podman/podman-engine.js';
import { WardenEngine } from '../engine/engine.js';
import { openAuditLedger } from '../engine/open-ledger.js';
import { ContextAuditSink } from '../engine/gateway/audit-context.js';
import { Gateway } from '../engine/gateway/gateway.js';
import { loadPolicy } from '../engine/gateway/policy-load.js';
import { LedgerView } from '../engine/ledger/ledger-view.js';
import type { Ledger } from '../engine/ledger/ledger.js';
import { noEngineYet, type EngineSource } from '../server/web-shell/engine-source.js';

const RELAYED: EventName[] = ['engine.status', 'sandbox.event', 'sandbox.resync', 'sandbox.attested', 'stats.sample', 'run.updated', 'run.call', 'run.output', 'approval.requested', 'approval.decided'];
const MAX_RETRY_MS = 5000;

export class EngineHost implements EngineSource {
  private readonly bus = new EventBus();
  private readonly ledger: Ledger;
  private readonly audit: ContextAuditSink;
  private readonly view: LedgerView;
  private readonly stopFollowingLedger: () => void;
  private engine: WardenEngine | null = null;
  private gw: Gateway | null = null;
  /** Windows that can answer approvals; each gateway is told while there is at least one. */
  private approvalWatchers = 0;
  private stopWatchingApprovals: (() => void) | null = null;
  private lastError: ErrorInfo | null = null;
  private retryMs = 500;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly home = ensureWardenHome()) {
    this.ledger = openAuditLedger(home);
    this.audit = new ContextAuditSink(this.ledger);
    this.view = new LedgerView(this.ledger);
    this.stopFollowingLedger = this.ledger.subscribe((entry) => this.bus.emit('ledger.appended', entry));
  }

  current(): WardenEngine {
    if (this.engine) return this.engine;
    throw noEngineYet(this.lastError ? `Podman is not reachable: ${this.lastError.message}` : 'connecting to Podman…', this.lastError?.hint);
  }

  gateway(): Gateway {
    this.current();
    return this.gw!;
  }

  ledgerView(): LedgerView {
    return this.view;
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
      // Not detached: Warden's own Podman service (if it has to start one) ends with the app.
      const podman = await PodmanEngine.open({ home: this.home, detachedService: false });
      const engine = new WardenEngine(podman, this.audit, { actor: 'user' });
      const { policy, source } = loadPolicy(this.home);
      const gateway = new Gateway(engine, this.audit, { policy, policySource: source });
      for (const event of RELAYED) engine.events.on(event, (payload) => this.bus.emit(event, payload as never));
      await engine.watch();
      if (this.closed) {
        gateway.close();
        engine.close();
        return;
      }
      this.engine = engine;
      this.gw = gateway;
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
    this.engine?.close();
    this.stopFollowingLedger();
    this.ledger.close();
    this.engine = null;
    this.gw = null;
  }
}
