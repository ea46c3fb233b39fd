// An interactive TTY exec for terminals: raw bytes both ways (no multiplexing with a TTY), resize.
import type { Duplex } from 'node:stream';
import type { TerminalSize } from '../../../shared/types/exec.js';
import type { PodmanConnection } from './connection.js';

export interface TerminalOptions {
  cmd?: string[];
  size?: TerminalSize;
  env?: Record<string, string>;
  cwd?: string;
}

export interface TerminalSession {
  readonly execId: string;
  write(data: string | Buffer): void;
  resize(size: TerminalSize): Promise<void>;
  onData(fn: (chunk: Buffer) => void): void;
  /**
   * Stops reading the shell's output until resume(): the engine's socket fills, and the process
   * in the sandbox blocks on its next write, so a slow reader slows the writer instead of
   * buffering without end.
   */
  pause(): void;
  resume(): void;
  /** Resolves with the shell's exit code (null when the engine went away). */
  readonly exited: Promise<number | null>;
  close(): void;
}

const DEFAULT_SHELL = ['/bin/sh', '-c', 'if command -v bash >/dev/null; then exec bash -l; else exec sh -l; fi'];

export async function openTerminal(conn: PodmanConnection, containerId: string, opts: TerminalOptions = {}): Promise<TerminalSession> {
  const env = { TERM: 'xterm-256color', LANG: 'C.UTF-8', ...opts.env };
  const exec = await conn.call('terminal', (docker) =>
    docker.getContainer(containerId).exec({
      Cmd: opts.cmd ?? DEFAULT_SHELL,
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: true,
      ...(opts.cwd ? { WorkingDir: opts.cwd } : {}),
    }),
  );
  const stream = (await conn.call('terminal', () => exec.start({ hijack: true, stdin: true, Tty: true }))) as Duplex;
  const listeners: Array<(chunk: Buffer) => void> = [];
  // The shell may print its prompt before anyone listens (the resize below, the caller's own
  // awaits): that output is held and handed to the first listener, never dropped.
  let early: Buffer[] | null = [];
  stream.on('data', (chunk: Buffer) => {
    if (early) early.push(chunk);
    else for (const fn of listeners) fn(chunk);
  });
  const exited = new Promise<number | null>((resolve) => {
    const finish = () => {
      exec.inspect().then(
        (info) => resolve((info as { ExitCode: number | null }).ExitCode ?? null),
        () => resolve(null),
      );
    };
    stream.once('end', finish);
    stream.once('close', finish);
    stream.once('error', () => resolve(null));
  });
  const session: TerminalSession = {
    execId: exec.id,
    write: (data) => {
      if (!stream.destroyed) stream.write(data);
    },
    resize: async (size) => {
      // Podman answers 201 here where dockerode expects 200, so the libpod endpoint is called directly.
      await conn.libpod('POST', `/exec/${exec.id}/resize?h=${size.rows}&w=${size.cols}`, undefined, 'terminal resize', [200, 201]);
    },
    onData: (fn) => {
      listeners.push(fn);
      if (early) {
        const held = early;
        early = null;
        for (const chunk of held) fn(chunk);
      }
    },
    pause: () => {
      stream.pause();
    },
    resume: () => {
      stream.resume();
    },
    exited,
    close: () => stream.destroy(),
  };
  if (opts.size) await session.resize(opts.size).catch(() => undefined);
  return session;
}
