// envd's process.Process calls on a command already running, each only on the caller's own (same
// agent, same sandbox; anyone else's pid is not found): Connect follows it from now on (its further
// output and its end, not what it printed before: E2B's semantics), SendInput writes to its stdin or
// its PTY, CloseStdin ends its input, Update resizes its PTY. They act inside the command's own tool
// call (decided, recorded and budgeted at its start; its input's size and digest go into its
// exec.finished entry), so they are not calls of their own.
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { AgentContext } from '../../engine/gateway/call-spec.js';
import { WardenError } from '../../../shared/errors.js';
import type { ProcessSelectorSchema } from '../../../shared/types/e2b.js';
import type { ProcessSendInputRequestSchema, ProcessUpdateRequestSchema } from '../../../shared/types/e2b-process.js';
import type { StreamMeter } from '../stream-meter.js';
import { ConnectStream } from './connect-protocol.js';
import { Follower, MAX_WAITING_WRITES, type LiveProcess, type ProcessTable } from './process-table.js';

type Selector = z.output<typeof ProcessSelectorSchema>;

/** The caller's running command, or not found (also while it waits on an ask: it has no pid for the client yet). */
function running(processes: ProcessTable, ctx: AgentContext, sandboxId: string, sel: Selector): LiveProcess {
  const entry = processes.find(ctx.agent, sandboxId, sel);
  if (!entry.running) throw new WardenError('E_NOT_FOUND', `no running command ${sel.pid ?? sel.tag ?? ''} in this sandbox`);
  return entry;
}

/**
 * process.Process/Connect: start (the pid), then the output from now on and the end. The stream
 * never holds the command back: past its bounded queue it is cut off (the command goes on).
 */
export function connectProcess(
  processes: ProcessTable,
  ctx: AgentContext,
  sandboxId: string,
  sel: Selector,
  reply: FastifyReply,
  keepalive: number,
  streams?: StreamMeter,
): void {
  const entry = running(processes, ctx, sandboxId, sel);
  const follower = new Follower(new ConnectStream(reply, streams), keepalive);
  try {
    processes.attach(entry, follower);
  } catch (err) {
    follower.end(undefined, err);
    return;
  }
  follower.stream.send({ event: { start: { pid: entry.pid } } });
}

/** process.Process/SendInput: resolves once the bytes are on their way (a command not reading holds this back). */
export async function sendInput(
  processes: ProcessTable,
  ctx: AgentContext,
  sandboxId: string,
  request: z.output<typeof ProcessSendInputRequestSchema>,
): Promise<Record<string, never>> {
  const entry = running(processes, ctx, sandboxId, request.process);
  const kind = 'pty' in request.input ? 'pty' : 'stdin';
  if (entry.input !== kind)
    throw new WardenError(
      'E_CONFLICT',
      entry.input === 'none' ? 'the command was started without stdin' : `the command takes its input as ${entry.input}, not ${kind}`,
      entry.input === 'none' ? 'start it with stdin: true' : undefined,
    );
  if (entry.waitingWrites >= MAX_WAITING_WRITES)
    throw new WardenError(
      'E_TOO_LARGE',
      `${MAX_WAITING_WRITES} writes are already waiting for the command to read its input`,
      'wait for one of them before sending more',
    );
  const data = Buffer.from('pty' in request.input ? request.input.pty : request.input.stdin, 'base64');
  entry.waitingWrites++;
  try {
    await (await entry.feed.ready).write(data);
  } finally {
    entry.waitingWrites--;
  }
  return {};
}

/** process.Process/CloseStdin: EOF after what was sent. */
export async function closeStdin(
  processes: ProcessTable,
  ctx: AgentContext,
  sandboxId: string,
  sel: Selector,
): Promise<Record<string, never>> {
  const entry = running(processes, ctx, sandboxId, sel);
  if (entry.input !== 'stdin') throw new WardenError('E_CONFLICT', 'the command was started without stdin', 'start it with stdin: true');
  (await entry.feed.ready).end();
  return {};
}

/** process.Process/Update: a PTY's new size. */
export async function updateProcess(
  processes: ProcessTable,
  ctx: AgentContext,
  sandboxId: string,
  request: z.output<typeof ProcessUpdateRequestSchema>,
): Promise<Record<string, never>> {
  const entry = running(processes, ctx, sandboxId, request.process);
  if (!request.pty) return {};
  if (entry.input !== 'pty') throw new WardenError('E_CONFLICT', 'the command has no pseudo-terminal to resize');
  (await entry.feed.ready).resize?.(request.pty.size);
  return {};
}
