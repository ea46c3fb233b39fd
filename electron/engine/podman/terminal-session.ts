// An interactive TTY exec for terminals: raw bytes both ways (no multiplexing with a TTY), resize.
// Through the sandbox's runner (a pseudo-terminal it opens, runner/runner-terminal.ts) when it is
// up, which avoids Podman's slow TTY relay; a Podman TTY exec otherwise.
import type { Duplex } from 'node:stream';
import type { TerminalSize } from '../../../shared/types/exec.js';
import type { PodmanConnection } from './connection.js';
import { TerminalOutput, type TerminalSession } from './terminal-types.js';
import { runnersOf } from '../runner/runner-registry.js';
import { terminalThroughRunner } from '../runner/runner-terminal.js';

export interface TerminalOptions {
  cmd?: string[];
  size?: TerminalSize;
  env?: Record<string, string>;
  cwd?: string;
}

export type { TerminalSession } from './terminal-types.js';

const DEFAULT_SHELL = ['/bin/sh', '-c', 'if command -v bash >/dev/null; then exec bash -l; else exec sh -l; fi'];

export async function openTerminal(conn: PodmanConnection, containerId: string, opts: TerminalOptions = {}): Promise<TerminalSession> {
  const env = { TERM: 'xterm-256color', LANG: 'C.UTF-8', ...opts.env };
  const runner = await runnersOf(conn).channelFor(containerId);
  if (runner) {
    return terminalThroughRunner(runner, {
      cmd: opts.cmd ?? DEFAULT_SHELL,
      env,
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
      ...(opts.size ? { size: opts.size } : {}),
    });
  }
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
  const output = new TerminalOutput();
  // The shell may print its prompt before anyone listens (the resize below, the caller's own
  // awaits): that output is held and handed to the first listener, never dropped.
  stream.on('data', (chunk: Buffer) => {
    output.push(chunk);
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
    onData: (fn) => output.listen(fn),
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
