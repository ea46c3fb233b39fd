// One Podman endpoint: found or started, watched, and reconnected with backoff when it goes away.
import { EventEmitter } from 'node:events';
import { Agent } from 'node:http';
import Dockerode from 'dockerode';
import { WardenError } from '../../../shared/errors.js';
import type { ConnectionInfo, ConnectionStatus, RuntimeCheck } from '../../../shared/types/engine.js';
import type { RuntimeName } from '../../../shared/types/sandbox.js';
import { findAnsweringSocket, pingSocket, socketCandidates, type SocketCandidate } from './socket-discovery.js';
import { OwnedService, ownedSocketPath, stopAdoptedService } from './owned-service.js';
import { isUnreachableError, mapEngineError, unreachable } from './engine-errors.js';
import { cachedEngineInfo, engineInfoOf, type EngineInfo, type LibpodInfo } from './engine-info-cache.js';
import { libpodRequest, libpodStream, readJsonLines, type LibpodMethod } from './libpod.js';

export interface ConnectOptions {
  home: string;
  env?: NodeJS.ProcessEnv;
  /** Use exactly this socket (tests, `--socket`). */
  socketPath?: string;
  /** Look for a running engine first (default true); false goes straight to a service of Warden's own. */
  discover?: boolean;
  /** Start `podman system service` when nothing answers (default true). */
  startService?: boolean;
  /** For an owned service: keep it after this process exits, with an idle timeout (the CLI). */
  detachedService?: boolean;
  serviceIdleSeconds?: number;
}

const MAX_BACKOFF_MS = 5000;
/** How long a reconnect's ping waits: a dead engine refuses at once, a busy one may take a while. */
const PING_MS = 3000;
/** How long a call waits on a reconnect already under way before it fails (a service restart fits). */
const VERDICT_WAIT_MS = 10_000;

export class PodmanConnection extends EventEmitter<{ status: [ConnectionStatus] }> {
  readonly id: string;
  readonly kind = 'podman' as const;
  readonly docker: Dockerode;
  private statusValue: ConnectionStatus = 'connected';
  private reconnectTimer: NodeJS.Timeout | null = null;
  private backoffMs = 100;
  private closed = false;
  private pendingVerdict: Promise<void> | null = null;
  private endVerdict: (() => void) | null = null;
  /** The runtime this service gives containers when none is forced (Podman 4.3 ignores a per-create choice). */
  serviceRuntime: string | null = null;
  private details: EngineInfo['details'] = {
    version: null,
    apiVersion: null,
    rootless: null,
    cgroupVersion: null,
  };
  runtimes: RuntimeCheck[] = [];
  defaultRuntime: RuntimeName | null = null;

  private constructor(
    readonly socketPath: string,
    readonly source: ConnectionInfo['source'],
    private service: OwnedService | null,
    private readonly options: ConnectOptions,
  ) {
    super();
    this.id = `podman:${socketPath}`;
    // A connection of its own per call: Node's default agent keeps sockets alive, and one that
    // Podman closes as idle just as a call is sent on it fails that call with "socket hang up",
    // which is Podman gone to every other call until the next ping (a create answered 503 on a
    // busy host). A Unix socket costs next to nothing to open.
    // docker-modem takes `agent`; its typings leave it out.
    const modem: Dockerode.DockerOptions & { agent: Agent } = { socketPath, agent: new Agent({ keepAlive: false }) };
    this.docker = new Dockerode(modem);
  }

  static async open(options: ConnectOptions): Promise<PodmanConnection> {
    const candidate = await PodmanConnection.locate(options);
    const conn = new PodmanConnection(candidate.socket.path, candidate.socket.source, candidate.service, options);
    await conn.loadInfo();
    return conn;
  }

  private static async locate(options: ConnectOptions): Promise<{ socket: SocketCandidate; service: OwnedService | null }> {
    if (options.socketPath) {
      if (await pingSocket(options.socketPath)) return { socket: { path: options.socketPath, source: 'explicit' }, service: null };
      throw unreachable(options.socketPath);
    }
    const candidates = options.discover === false ? [] : socketCandidates(options.env ?? process.env);
    // A service Warden left running (CLI, idle timeout) is as good as any.
    candidates.push({ path: ownedSocketPath(options.home), source: 'owned-service' });
    const found = await findAnsweringSocket(candidates);
    if (found) return { socket: found, service: null };
    if (options.startService === false) {
      throw new WardenError(
        'E_ENGINE_UNREACHABLE',
        `no Podman API socket answers (tried ${candidates.map((c) => c.path).join(', ')})`,
        'start one with `podman system service --time=0 &`, or set CONTAINER_HOST=unix:///path/to/podman.sock',
      );
    }
    const service = await OwnedService.start({
      home: options.home,
      idleSeconds: options.serviceIdleSeconds ?? 0,
      detached: options.detachedService ?? false,
    });
    return { socket: { path: service.socketPath, source: 'owned-service' }, service };
  }

  /** Found at this home's own service socket rather than started here (started by the CLI, say). */
  private get adoptedOwnService(): boolean {
    return this.source === 'owned-service' && this.options.startService !== false && this.socketPath === ownedSocketPath(this.options.home);
  }

  /** The log of the service when it is Warden's own (restarted by it when it dies), for the error's hint. */
  private get ownLog(): string | undefined {
    if (!this.service && !this.adoptedOwnService) return undefined;
    return this.socketPath.replace(/podman(-[a-z0-9]+)?\.sock$/, 'podman-service$1.log');
  }

  get status(): ConnectionStatus {
    return this.statusValue;
  }

  get ownedServicePid(): number | undefined {
    return this.service?.pid;
  }

  info(): ConnectionInfo {
    return {
      id: this.id,
      kind: this.kind,
      socketPath: this.socketPath,
      source: this.source,
      status: this.statusValue,
      ...this.details,
      runtimes: this.runtimes,
      defaultRuntime: this.defaultRuntime,
    };
  }

  /** The service's details, from the cache for this socket when it has them (engine-info-cache.ts). */
  private async loadInfo(): Promise<void> {
    this.apply(await cachedEngineInfo(this.options.home, this.socketPath, () => this.fetchInfo()));
  }

  async refreshInfo(): Promise<void> {
    this.apply(await this.fetchInfo());
  }

  private async fetchInfo(): Promise<EngineInfo> {
    return engineInfoOf(await this.libpod<LibpodInfo>('GET', '/info', undefined, 'engine info'));
  }

  private apply(info: EngineInfo): void {
    this.details = info.details;
    this.serviceRuntime = info.serviceRuntime;
  }

  /**
   * Runs an engine call. While the engine is down it fails at once with E_ENGINE_UNREACHABLE;
   * a call that finds it gone starts the reconnect loop. `what` names the object for messages.
   */
  async call<T>(what: string, fn: (docker: Dockerode) => Promise<T>): Promise<T> {
    if (this.closed) throw new WardenError('E_ENGINE_UNREACHABLE', 'the engine connection is closed');
    // Just found gone, not yet tried again: the try under way decides (a ping, or a restart of a
    // service of Warden's), so one blip on a busy host is not a failed call.
    if (this.statusValue === 'connecting') await this.verdict();
    if (this.statusValue !== 'connected') throw unreachable(this.socketPath, this.ownLog);
    try {
      return await fn(this.docker);
    } catch (err) {
      if (isUnreachableError(err)) this.markUnreachable();
      throw mapEngineError(err, what, this.socketPath, this.ownLog);
    }
  }

  /** A Podman-only (libpod) endpoint, through the same modem as dockerode. */
  libpod<T>(method: LibpodMethod, path: string, body: unknown, what: string, statusCodes: number[] = [200, 201, 204]): Promise<T> {
    return this.call(what, (docker) => libpodRequest<T>(docker, method, path, body, statusCodes));
  }

  /**
   * A libpod GET that gives up after `ms`: the request is abandoned and `late()` is thrown. The
   * connection is not marked unreachable then: Podman waiting on one wedged container (its list and
   * inspect lock each container they read) is not Podman gone, and every other call still goes through.
   */
  async libpodWithin<T>(ms: number, path: string, what: string, late: () => WardenError): Promise<T> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        reject(late());
        abort.abort();
      }, ms);
    });
    try {
      return await Promise.race([
        this.call(what, (docker) => libpodRequest<T>(docker, 'GET', path, undefined, [200], abort.signal)),
        bound,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A long-lived libpod stream (events, stats) of newline-delimited JSON, one object per call of onObject. */
  async libpodJsonStream(path: string, what: string, onObject: (value: unknown) => void): Promise<NodeJS.ReadableStream> {
    const stream = await this.call(what, (docker) => libpodStream(docker, path));
    readJsonLines(stream, onObject);
    return stream;
  }

  /** Whether the engine answers a ping now (within PING_MS). */
  answers(): Promise<boolean> {
    return pingSocket(this.socketPath, PING_MS);
  }

  /**
   * Resolves when the reconnect under way has decided (or after VERDICT_WAIT_MS, whichever is
   * first). One wait for all the calls that come meanwhile (one listener, however many they are).
   */
  private verdict(): Promise<void> {
    this.pendingVerdict ??= new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.off('status', done);
        this.pendingVerdict = this.endVerdict = null;
        resolve();
      };
      const timer = setTimeout(done, VERDICT_WAIT_MS);
      this.on('status', done);
      this.endVerdict = done;
    });
    return this.pendingVerdict;
  }

  /** Called by anyone who sees the engine gone (a call, a dropped event stream). */
  markUnreachable(): void {
    if (this.closed || this.statusValue === 'connecting') return;
    this.setStatus('connecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || this.closed) return;
    this.reconnectTimer = setTimeout(() => void this.tryReconnect(), this.backoffMs);
    this.reconnectTimer.unref();
  }

  private async tryReconnect(): Promise<void> {
    this.reconnectTimer = null;
    if (this.closed) return;
    if (await this.answers()) {
      this.backoffMs = 100;
      this.setStatus('connected');
      return;
    }
    // A service of Warden's for this home that died (or idled out) is restarted — one this process
    // started, or one another Warden process started and this one adopted: it owns what it adopts.
    // Someone else's is waited for.
    if ((this.service || this.adoptedOwnService) && !this.closed) {
      try {
        this.service?.stop();
        this.service = await OwnedService.start({
          home: this.options.home,
          idleSeconds: this.options.serviceIdleSeconds ?? 0,
          detached: this.options.detachedService ?? false,
        });
        this.backoffMs = 100;
        this.setStatus('connected');
        return;
      } catch {
        // fall through to backoff
      }
    }
    this.setStatus('unreachable');
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
    this.scheduleReconnect();
  }

  private setStatus(status: ConnectionStatus): void {
    if (status === this.statusValue) return;
    this.statusValue = status;
    this.emit('status', status);
  }

  /**
   * Stops reconnecting; stops this home's service too unless this process leaves services running
   * for later commands (the CLI) — one it adopted as well as one it started, since it owns what it adopts.
   */
  close(): void {
    this.closed = true;
    this.endVerdict?.(); // waiting calls fail now, as closed
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    if (this.options.detachedService) return;
    if (this.service) this.service.stop();
    else if (this.adoptedOwnService) stopAdoptedService(this.socketPath);
  }
}
