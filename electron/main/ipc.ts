// The typed contract over IPC. Every call is checked for its sender (our window's main frame, on
// our origin) and validated against the shared schemas by the session before it reaches the
// engine; answers are envelopes. Events wait in a queue until the renderer says it is ready.
import { ipcMain, type IpcMainEvent, type IpcMainInvokeEvent, type WebContents, type WebFrameMain } from 'electron';
import { IPC_CHANNELS } from '../../shared/contracts/methods.js';
import type { EventMessage } from '../../shared/contracts/events.js';
import type { Envelope } from '../../shared/errors.js';
import type { EngineHost } from './engine-host.js';
import type { StatsHub } from '../ui-door/stats-hub.js';
import { UiSession } from '../ui-door/ui-session.js';

const MAX_QUEUED = 5000;

interface Client {
  session: UiSession;
  ready: boolean;
  queue: EventMessage[];
}

export class IpcDoor {
  private readonly clients = new Map<number, Client>();

  constructor(
    private readonly source: EngineHost,
    private readonly hub: StatsHub,
    private readonly isTrustedOrigin: (url: string) => boolean,
  ) {
    ipcMain.handle(IPC_CHANNELS.invoke, (event, method: unknown, params: unknown) => this.invoke(event, method, params));
    ipcMain.on(IPC_CHANNELS.ready, (event) => this.ready(event));
  }

  /** Serves a window's web contents; its streams close when it reloads or goes. */
  attach(contents: WebContents): void {
    const reset = () => {
      this.clients.get(contents.id)?.session.dispose();
      this.clients.set(contents.id, this.newClient(contents));
    };
    reset();
    contents.on('did-start-navigation', (details) => {
      if (details.isMainFrame && !details.isSameDocument) reset();
    });
    contents.on('render-process-gone', reset);
    contents.once('destroyed', () => {
      this.clients.get(contents.id)?.session.dispose();
      this.clients.delete(contents.id);
    });
  }

  private newClient(contents: WebContents): Client {
    const client: Client = {
      ready: false,
      queue: [],
      session: new UiSession(
        this.source,
        this.hub,
        (message) => {
          if (contents.isDestroyed()) return;
          if (client.ready) contents.send(IPC_CHANNELS.event, message);
          else if (client.queue.length < MAX_QUEUED) client.queue.push(message);
        },
        'user (app)',
        () => this.source.watchApprovals(),
      ),
    };
    return client;
  }

  private trusted(event: IpcMainEvent | IpcMainInvokeEvent): Client | null {
    const frame: WebFrameMain | null = event.senderFrame;
    if (!frame || frame !== event.sender.mainFrame) return null;
    if (!this.isTrustedOrigin(frame.url)) return null;
    return this.clients.get(event.sender.id) ?? null;
  }

  private async invoke(event: IpcMainInvokeEvent, method: unknown, params: unknown): Promise<Envelope<unknown>> {
    const client = this.trusted(event);
    if (!client) return { error: { code: 'E_UNAUTHORIZED', message: 'this frame may not call Warden' } };
    return client.session.invoke(method, params);
  }

  private ready(event: IpcMainEvent): void {
    const client = this.trusted(event);
    if (!client || client.ready) return;
    client.ready = true;
    for (const message of client.queue.splice(0)) event.sender.send(IPC_CHANNELS.event, message);
  }

  close(): void {
    ipcMain.removeHandler(IPC_CHANNELS.invoke);
    ipcMain.removeAllListeners(IPC_CHANNELS.ready);
    for (const client of this.clients.values()) client.session.dispose();
    this.clients.clear();
  }
}
