// A `podman system service` that Warden starts itself when no socket answers.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { WardenError } from '../../../shared/errors.js';
import { pingSocket, probeSocket } from './socket-discovery.js';
import { ociRuntimeArg } from './oci-runtime.js';
import type { RuntimeName } from '../../../shared/types/sandbox.js';

/** The socket of Warden's own service; one per runtime when a runtime is forced (see runtime-router.ts). */
export function ownedSocketPath(home: string, runtime?: string): string {
  return join(home, 'run', runtime ? `podman-${runtime}.sock` : 'podman.sock');
}

export function ownedLogPath(home: string, runtime?: string): string {
  return join(home, 'run', runtime ? `podman-service-${runtime}.log` : 'podman-service.log');
}

/** With CONTAINER_HOST set, the podman command turns into a remote client without --runtime or service: this is the environment of the podman CLI on this machine's own storage, as a person at a terminal runs it. */
export function localPodmanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.CONTAINER_HOST;
  delete env.CONTAINER_CONNECTION;
  return env;
}

export function podmanInstalled(): boolean {
  return spawnSync('podman', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Stops a service of Warden's on this socket that another process started (and this one adopted):
 * there is no child to signal, so its process is found by the command line Warden starts it with
 * (`podman … system service --time=N unix://SOCKET`), among this user's processes. Returns the pids signalled.
 */
export function stopAdoptedService(socketPath: string): number[] {
  const listen = `unix://${socketPath}`;
  const uid = process.getuid?.();
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids; // no procfs: nothing to find it by
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (uid !== undefined && statSync(`/proc/${pid}`).uid !== uid) continue;
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const at = args.indexOf('system');
      if (at < 0 || args[at + 1] !== 'service' || args.at(-2) !== listen) continue;
      process.kill(pid, 'SIGTERM');
      pids.push(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

export interface OwnedServiceOptions {
  home: string;
  /**
   * Seconds the service stays up with no client. 0 = forever (the app stops it on exit);
   * the CLI leaves a service with an idle timeout so the next command finds it warm.
   */
  idleSeconds: number;
  /** When true the service outlives this process (CLI); otherwise it is stopped on exit. */
  detached: boolean;
  /** Start the service with `--runtime` (a name, or runsc's wrapper path), so every container it creates uses that runtime. */
  runtime?: RuntimeName;
  readyTimeoutMs?: number;
}

export class OwnedService {
  private child: ChildProcess | null = null;
  private readonly onExit = () => this.stop();

  constructor(readonly socketPath: string) {}

  static async start(opts: OwnedServiceOptions): Promise<OwnedService> {
    if (!podmanInstalled()) {
      throw new WardenError(
        'E_ENGINE_UNREACHABLE',
        'no Podman API socket answers and the podman command is not installed',
        'install Podman (apt-get install podman runc catatonit uidmap) or set CONTAINER_HOST to a running Podman socket',
      );
    }
    const service = new OwnedService(ownedSocketPath(opts.home, opts.runtime));
    await service.launch(opts);
    return service;
  }

  private async launch(opts: OwnedServiceOptions): Promise<void> {
    const runDir = join(opts.home, 'run');
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
    // A socket file left by a dead service would make the new one fail to bind; a live but busy
    // one (another Warden's service under load) is left alone.
    if (existsSync(this.socketPath) && (await probeSocket(this.socketPath, 500)) === 'absent') rmSync(this.socketPath, { force: true });
    const logFile = ownedLogPath(opts.home, opts.runtime);
    const logFd = openSync(logFile, 'a');
    const runtimeArgs = opts.runtime ? ['--runtime', ociRuntimeArg(opts.runtime)] : [];
    try {
      this.child = spawn('podman', [...runtimeArgs, 'system', 'service', `--time=${opts.idleSeconds}`, `unix://${this.socketPath}`], {
        stdio: ['ignore', logFd, logFd],
        env: localPodmanEnv(),
        // conmon writes an `oom` marker into its working directory when an exec is OOM-killed:
        // keep that in Warden's run directory, not wherever Warden was started.
        cwd: runDir,
        // Always a process group of its own: a Ctrl-C, or `timeout`'s SIGTERM, signals the whole group
        // of the process that started it, and a service that died with it left that process no Podman to
        // remove its warm pool with. A service that is not detached is stopped by its owner, on close or exit.
        detached: true,
      });
    } finally {
      closeSync(logFd);
    }
    if (opts.detached) this.child.unref();
    else process.once('exit', this.onExit);

    const deadline = Date.now() + (opts.readyTimeoutMs ?? 15_000);
    let exited: number | null = null;
    this.child.once('exit', (code) => (exited = code ?? -1));
    while (Date.now() < deadline) {
      if (exited !== null) break;
      if (await pingSocket(this.socketPath, 500)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    this.stop();
    throw new WardenError(
      'E_ENGINE_UNREACHABLE',
      exited !== null
        ? `podman system service exited with code ${exited} before its socket answered`
        : 'podman system service did not answer in time',
      `see ${logFile}; check that \`podman info\` works`,
    );
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  stop(): void {
    process.removeListener('exit', this.onExit);
    if (this.child && this.child.exitCode === null) this.child.kill('SIGTERM');
    this.child = null;
  }
}
