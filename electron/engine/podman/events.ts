// Engine events for Warden's sandboxes, including changes made outside Warden (podman CLI).
// The stream is re-opened after the engine comes back, from the last event seen, so nothing in
// between is lost; subscribers are also told to resync in case the gap was longer than the log.
import type { EngineEvent, EngineEventKind } from '../../../shared/types/engine.js';
import type { PodmanConnection } from './connection.js';
import { LABEL } from './labels.js';
import { exitReason } from './exit-reason.js';

export interface LibpodEvent {
  Type: string;
  Action: string;
  Actor: { ID: string; Attributes: Record<string, string> };
  time: number;
  timeNano?: number;
}

const ACTION_MAP: Record<string, EngineEventKind> = {
  create: 'create',
  start: 'start',
  stop: 'stop',
  died: 'die',
  die: 'die',
  oom: 'oom',
  pause: 'pause',
  unpause: 'unpause',
  remove: 'remove',
  kill: 'kill',
  restart: 'restart',
};

/** An event of a sandbox of this home (or a legacy one) as Warden reports it; another home's: null. */
export function toEngineEvent(e: LibpodEvent, homeId?: string): EngineEvent | null {
  if (e.Type !== 'container') return null;
  const attrs = e.Actor.Attributes ?? {};
  if (attrs[LABEL.managed] !== 'true') return null;
  if (homeId !== undefined && attrs[LABEL.home] !== undefined && attrs[LABEL.home] !== homeId) return null;
  const kind = ACTION_MAP[e.Action];
  if (!kind) return null;
  const event: EngineEvent = {
    kind,
    sandboxId: e.Actor.ID,
    name: attrs.name ?? e.Actor.ID.slice(0, 12),
    time: e.timeNano ? Math.floor(e.timeNano / 1e6) : e.time * 1000,
  };
  if (kind === 'die' && attrs.containerExitCode !== undefined) {
    event.exitCode = Number(attrs.containerExitCode);
    // The runtime label is what create asked for and then checked against inspect.
    const reason = exitReason(attrs[LABEL.runtime] ?? '', event.exitCode, false);
    if (reason) event.reason = reason;
  }
  return event;
}

export interface EngineEventHandlers {
  /** Events of other Warden homes' sandboxes are dropped. */
  homeId?: string;
  onEvent(event: EngineEvent): void;
  /** The stream was re-opened after a gap: refetch the list. */
  onResync?(): void;
}

export class EngineEvents {
  private stream: (NodeJS.ReadableStream & { destroy(): void }) | null = null;
  private lastTimeSec = 0;
  private stopped = false;
  private readonly onStatus = (status: string) => {
    if (status === 'connected' && !this.stream) void this.open(true);
  };

  constructor(
    private readonly conn: PodmanConnection,
    private readonly handlers: EngineEventHandlers,
  ) {}

  async start(): Promise<void> {
    this.conn.on('status', this.onStatus);
    this.lastTimeSec = Math.floor(Date.now() / 1000);
    await this.open(false);
  }

  private async open(resync: boolean): Promise<void> {
    if (this.stopped) return;
    const filters = encodeURIComponent(JSON.stringify({ type: ['container'], label: [`${LABEL.managed}=true`] }));
    try {
      const stream = (await this.conn.libpodJsonStream(
        `/events?stream=true&since=${this.lastTimeSec}&filters=${filters}`,
        'events',
        (value) => {
          const raw = value as LibpodEvent;
          if (raw.time) this.lastTimeSec = raw.time;
          const event = toEngineEvent(raw, this.handlers.homeId);
          if (event) this.handlers.onEvent(event);
        },
      )) as NodeJS.ReadableStream & { destroy(): void };
      this.stream = stream;
      const closed = () => {
        if (this.stream !== stream) return;
        this.stream = null;
        // The engine went away (or restarted): the connection reconnects and onStatus re-opens.
        if (!this.stopped) this.conn.markUnreachable();
      };
      stream.on('end', closed);
      stream.on('close', closed);
      stream.on('error', closed);
      if (resync) this.handlers.onResync?.();
    } catch {
      // unreachable: onStatus re-opens when the connection is back
    }
  }

  stop(): void {
    this.stopped = true;
    this.conn.off('status', this.onStatus);
    this.stream?.destroy();
    this.stream = null;
  }
}
