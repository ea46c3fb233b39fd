// One command in a sandbox: streamed stdout/stderr (demultiplexed), exit code, duration,
// a timeout that kills the command's whole process tree, and an output cap. Through the sandbox's
// runner when it is up (runner/runner-exec.ts, same promises); the plain engine exec below otherwise.
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WardenError } from '../../../shared/errors.js';
import type { ExecRequest, ExecResult } from '../../../shared/types/exec.js';
import type { PodmanConnection } from './connection.js';
import { OutputSink } from './output-sink.js';
import { FrameDemuxer } from './frame-demuxer.js';
export { TIMEOUT_EXIT_CODE, type ExecHandlers } from './exec-handlers.js';
import { execResultOf, type ExecHandlers } from './exec-handlers.js';
import { runnersOf } from '../runner/runner-registry.js';
import { execThroughRunner } from '../runner/runner-exec.js';
import { PlainStdin } from './plain-stdin.js';

const EXEC_MARKER = 'WARDEN_EXEC_ID';

/**
 * Kills every process that carries this exec's marker in its environment, as the exec's user
 * (sandboxes have no CAP_KILL, so only the same uid may signal). Rounds repeat until none is
 * left, which also catches children forked while the previous round ran.
 */
const KILL_TREE_SCRIPT = `m="${EXEC_MARKER}=$1"; self=$$
i=0
while [ $i -lt 50 ]; do
  i=$((i+1)); found=0
  for d in /proc/[0-9]*; do
    p=\${d#/proc/}
    [ "$p" = "$self" ] && continue
    if tr '\\0' '\\n' < "$d/environ" 2>/dev/null | grep -qxF "$m"; then kill -9 "$p" 2>/dev/null; found=1; fi
  done
  [ $found = 0 ] && exit 0
done
exit 1`;

/**
 * Reads the sandbox cgroup's cumulative OOM-kill count (v2 memory.events, v1 memory.oom_control).
 * Only read after a command died of SIGKILL, to tell an OOM kill from any other.
 */
const OOM_COUNT_SCRIPT = `for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
  if [ -r "$f" ]; then while read -r k v; do [ "$k" = oom_kill ] && { echo "$v"; exit 0; }; done < "$f"; fi
done
echo 0`;

/** OOM kills already reported, per container, so each kill is reported once (in this process). */
const oomSeen = new Map<string, number>();

/** Whether this cumulative OOM-kill count (the sandbox cgroup's) holds a kill not yet reported. */
function isNewOomKill(containerId: string, count: number): boolean {
  const seen = oomSeen.get(containerId) ?? 0;
  oomSeen.set(containerId, count);
  return count > seen;
}

async function newOomKill(conn: PodmanConnection, containerId: string): Promise<boolean> {
  const reader = await conn.call('exec', (docker) =>
    docker.getContainer(containerId).exec({ Cmd: ['/bin/sh', '-c', OOM_COUNT_SCRIPT], AttachStdout: true, AttachStderr: true }),
  );
  const stream = await conn.call('exec', () => reader.start({ hijack: false, stdin: false }));
  const chunks: Buffer[] = [];
  const demuxer = new FrameDemuxer(
    (c) => chunks.push(Buffer.from(c)),
    () => undefined,
  );
  await new Promise<void>((resolve) =>
    stream
      .on('data', (c: Buffer) => demuxer.push(c))
      .on('end', resolve)
      .on('close', resolve)
      .on('error', () => resolve()),
  );
  return isNewOomKill(containerId, Number(Buffer.concat(chunks).toString().trim()) || 0);
}

export function argvOf(cmd: ExecRequest['cmd']): string[] {
  return typeof cmd === 'string' ? ['/bin/sh', '-c', cmd] : cmd;
}

interface ExecInspect {
  Running: boolean;
  ExitCode: number | null;
}

async function waitForExit(conn: PodmanConnection, execId: string): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const info = await conn.call('exec', (docker) => docker.getExec(execId).inspect() as Promise<ExecInspect>);
    if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    await new Promise((r) => setTimeout(r, attempt < 10 ? 5 : 20));
  }
  throw new WardenError('E_ENGINE', 'the command ended but the engine did not report its exit code');
}

async function killTree(conn: PodmanConnection, containerId: string, marker: string, user: string | undefined): Promise<void> {
  const killer = await conn.call('exec', (docker) =>
    docker.getContainer(containerId).exec({
      Cmd: ['/bin/sh', '-c', KILL_TREE_SCRIPT, 'warden-kill', marker],
      AttachStdout: true,
      AttachStderr: true,
      ...(user ? { User: user } : {}),
    }),
  );
  const stream = await conn.call('exec', () => killer.start({ hijack: false, stdin: false }));
  await new Promise<void>((resolve) => {
    stream
      .on('end', resolve)
      .on('close', resolve)
      .on('error', () => resolve());
    stream.resume();
  });
}

export async function runExec(
  conn: PodmanConnection,
  containerId: string,
  req: ExecRequest,
  handlers: ExecHandlers = {},
): Promise<ExecResult> {
  if (handlers.signal?.aborted)
    throw new WardenError('E_CONFLICT', `the command was not started: ${String(handlers.signal.reason ?? 'its caller went away')}`);
  const runner = handlers.stdinFrom ? null : await runnersOf(conn).channelFor(containerId);
  if (runner) {
    const result = await execThroughRunner(runner, req, handlers, {
      argv: argvOf(req.cmd),
      isNewOomKill: (count) => isNewOomKill(containerId, count),
    });
    if (result) return result;
  }
  return runPlainExec(conn, containerId, req, handlers);
}

/** The plain path: one engine exec per command (and the fallback whenever the runner is not up). */
export async function runPlainExec(
  conn: PodmanConnection,
  containerId: string,
  req: ExecRequest,
  handlers: ExecHandlers = {},
): Promise<ExecResult> {
  const marker = randomBytes(8).toString('hex');
  const env = Object.entries(req.env ?? {}).map(([k, v]) => `${k}=${v}`);
  env.push(`${EXEC_MARKER}=${marker}`);
  if (handlers.pty)
    throw new WardenError(
      'E_CONFLICT',
      "a pseudo-terminal needs Warden's runner in the sandbox, and it is not up",
      'try again once the sandbox has restarted',
    );
  const streamed = handlers.openInput !== undefined;
  const hasStdin = req.stdin !== undefined || streamed || handlers.stdinFrom !== undefined;
  const started = performance.now();

  const exec = await conn.call('exec', (docker) =>
    docker.getContainer(containerId).exec({
      Cmd: argvOf(req.cmd),
      Env: env,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: hasStdin,
      Tty: false,
      ...(req.cwd ? { WorkingDir: req.cwd } : {}),
      ...(req.user ? { User: req.user } : {}),
    }),
  );
  // Hijacked (a raw socket instead of a chunked HTTP body): faster, and the same path with or without stdin.
  const stream = (await conn.call('exec', () => exec.start({ hijack: true, stdin: hasStdin }))) as Duplex;

  const limit = req.outputLimitBytes ?? Number.MAX_SAFE_INTEGER;
  const stdout = new OutputSink(limit, handlers.onStdout, handlers.allowance);
  const stderr = new OutputSink(limit, handlers.onStderr, handlers.allowance);
  const demuxer = new FrameDemuxer(stdout.accept, stderr.accept);

  let timedOut = false;
  let cancelled: string | undefined;
  let timer: NodeJS.Timeout | null = null;
  let forceClose: NodeJS.Timeout | null = null;
  const ended = new Promise<void>((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => {
      try {
        demuxer.push(chunk);
      } catch (err) {
        stream.destroy();
        reject(err);
        return;
      }
      if ((stdout.wantsPause || stderr.wantsPause) && handlers.drain) {
        stdout.wantsPause = stderr.wantsPause = false;
        stream.pause();
        handlers.drain().then(
          () => stream.resume(),
          () => stream.resume(),
        );
      }
    });
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', (err: NodeJS.ErrnoException) => {
      // A command that exits without reading all its stdin closes the stream under our write: that
      // is its business (its exit code says how it ended), not a broken engine connection.
      if (hasStdin && (err.code === 'EPIPE' || err.code === 'ECONNRESET')) resolve();
      else reject(err);
    });
  });
  if (req.timeoutMs) {
    timer = setTimeout(() => {
      timedOut = true;
      killTree(conn, containerId, marker, req.user)
        .catch(() => undefined)
        .finally(() => {
          // Anything still holding the stream open past the kill is cut off.
          forceClose = setTimeout(() => stream.destroy(), 2000);
        });
    }, req.timeoutMs);
  }
  // Nobody is reading any more: kill the tree (as a timeout does) and stop reading what is left,
  // so a stream paused for a reader that vanished does not hold the command (and its call) open.
  const cancel = () => {
    if (timedOut || cancelled !== undefined) return;
    cancelled = String(handlers.signal?.reason ?? 'cancelled');
    if (timer) clearTimeout(timer);
    stream.resume();
    killTree(conn, containerId, marker, req.user)
      .catch(() => undefined)
      .finally(() => stream.destroy());
  };
  handlers.signal?.addEventListener('abort', cancel, { once: true });
  if (handlers.signal?.aborted) cancel(); // gone while the exec was being created
  let sourceError: Error | null = null;
  if (streamed) handlers.openInput!(new PlainStdin(stream));
  else if (handlers.stdinFrom) {
    // A source that fails (a file read error) must not leave the command waiting for the rest; it is
    // the caller's failure, not the engine connection's.
    handlers.stdinFrom.once('error', (err) => {
      sourceError = err;
      stream.destroy();
    });
    handlers.stdinFrom.pipe(stream);
  } else if (hasStdin) {
    stream.write(req.stdin);
    stream.end();
  }

  try {
    await ended;
  } catch (err) {
    if (err instanceof WardenError) throw err;
    conn.markUnreachable();
    throw new WardenError(
      'E_ENGINE_UNREACHABLE',
      `the engine connection broke while the command ran: ${(err as Error).message}`,
      'check that Podman is running; Warden reconnects by itself',
    );
  } finally {
    if (timer) clearTimeout(timer);
    if (forceClose) clearTimeout(forceClose);
    handlers.signal?.removeEventListener('abort', cancel);
  }
  if (sourceError) throw new WardenError('E_ENGINE', `the command's input could not be read: ${(sourceError as Error).message}`);
  const exitCode = await waitForExit(conn, exec.id);
  const oomKilled = exitCode === 137 && !timedOut ? await newOomKill(conn, containerId).catch(() => false) : false;
  return execResultOf({ started, exitCode, timedOut, stdout, stderr, oomKilled, cancelled });
}

export interface CollectedExec extends ExecResult {
  stdout: Buffer;
  stderr: Buffer;
}

/** Runs a command and keeps its (capped) output in memory. */
export async function collectExec(conn: PodmanConnection, containerId: string, req: ExecRequest): Promise<CollectedExec> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const result = await runExec(conn, containerId, req, { onStdout: (c) => out.push(c), onStderr: (c) => err.push(c) });
  return { ...result, stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
}
