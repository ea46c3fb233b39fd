// envd's process.Process for the e2b SDK (sandbox.commands, sandbox.pty): Start runs the command
// through the gateway's exec (policy, approvals, budgets, the run and the ledger, as the agent API's
// exec does), on a pipe or a pseudo-terminal, its stdin empty or streamed by the client, and streams
// its start, output and end to its starter and to every client attached since (envd-attach.ts);
// SendSignal ends one of the caller's commands; List shows them.
import { posix } from 'node:path';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { Gateway } from '../../engine/gateway/gateway.js';
import type { AgentContext } from '../../engine/gateway/call-spec.js';
import type { ProcessInfo, ProcessSelectorSchema, ProcessStartRequestSchema } from '../../../shared/types/e2b.js';
import { WardenError } from '../../../shared/errors.js';
import type { StreamMeter } from '../stream-meter.js';
import type { CommandInput } from '../../engine/podman/exec-handlers.js';
import { ConnectStream } from './connect-protocol.js';
import { wardenPath } from './envd-paths.js';
import { Follower, type InputKind, type OutputField, type ProcessTable } from './process-table.js';

/** Bounds on the keepalive interval a client asks for (Keepalive-Ping-Interval, seconds). */
const KEEPALIVE_MIN_S = 5;
const KEEPALIVE_MAX_S = 300;

/**
 * How often a quiet command's stream says it is alive, as envd does: a client's HTTP stack gives up
 * on a body that sends nothing for minutes (undici: 300 s), and a command may print nothing for longer.
 */
export function keepaliveMs(header: string | string[] | undefined): number {
  const asked = Number(Array.isArray(header) ? header[0] : header);
  const seconds = Number.isFinite(asked) && asked > 0 ? asked : 50;
  return Math.min(KEEPALIVE_MAX_S, Math.max(KEEPALIVE_MIN_S, seconds)) * 1000;
}

export interface ProcessDeps {
  gateway: Gateway;
  processes: ProcessTable;
  streams?: StreamMeter;
}

/** process.Process/Start: the stream answers start (once the call is allowed), data, then end. */
export async function startProcess(
  { gateway, processes, streams }: ProcessDeps,
  ctx: AgentContext,
  sandboxId: string,
  request: z.output<typeof ProcessStartRequestSchema>,
  reply: FastifyReply,
  keepalive = keepaliveMs(undefined),
): Promise<void> {
  const { process: config, tag } = request;
  const pty = request.pty ?? undefined;
  const input: InputKind = pty ? 'pty' : request.stdin ? 'stdin' : 'none';
  const stream = new ConnectStream(reply, streams);
  const entry = processes.add({ agent: ctx.agent, sandboxId, config, input, ...(tag !== undefined ? { tag } : {}) }, stream.gone);
  const starter = new Follower(stream, keepalive);
  // Every follower gets each chunk; only the starter's queue holds the command back (while it is there).
  const chunk = (field: OutputField) => (c: Buffer) => {
    starter.output(field, c);
    for (const f of entry.followers) f.output(field, c);
    return stream.gone.aborted || !stream.congested;
  };
  const everyone = () => [starter, ...entry.followers];
  try {
    // A relative cwd is relative to the home, as on E2B: here, the workspace.
    const cwd = config.cwd === undefined ? undefined : posix.resolve('/workspace', wardenPath(config.cwd));
    const result = await gateway.exec(
      ctx,
      sandboxId,
      {
        cmd: [config.cmd, ...config.args],
        ...(cwd ? { cwd } : {}),
        // ~ is the E2B home, and that is /workspace here (envd-paths.ts); the caller's own HOME wins.
        env: { HOME: '/workspace', ...config.envs },
      },
      {
        onStdout: chunk(pty ? 'pty' : 'stdout'),
        onStderr: chunk('stderr'),
        drain: stream.drained,
        // SendSignal, or the last client following the command gone (its timeout, disconnect), ends it.
        signal: entry.kill.signal,
        onRunning: () => {
          entry.running = true;
          stream.send({ event: { start: { pid: entry.pid } } });
        },
        ...(input !== 'none' ? { openInput: (feed: CommandInput) => entry.feed.resolve(feed) } : {}),
        ...(pty ? { pty: pty.size } : {}),
      },
    );
    const status = result.cancelled ? `killed (${result.cancelled})` : result.timedOut ? 'timed out' : `exit status ${result.exitCode}`;
    const end = { event: { end: { exitCode: result.exitCode, exited: !result.cancelled && !result.timedOut, status } } };
    for (const f of everyone()) f.end(end);
  } catch (err) {
    for (const f of everyone()) f.end(undefined, err);
  } finally {
    entry.feed.reject(new WardenError('E_CONFLICT', 'the command has ended'));
    processes.remove(entry.pid);
  }
}

export function listProcesses(processes: ProcessTable, ctx: AgentContext, sandboxId: string): { processes: ProcessInfo[] } {
  return {
    processes: processes.list(ctx.agent, sandboxId).map((p) => ({ config: p.config, pid: p.pid, ...(p.tag ? { tag: p.tag } : {}) })),
  };
}

/** SIGTERM and SIGKILL both end the command the way a client hanging up does (Warden ends the process group). */
export function signalProcess(
  processes: ProcessTable,
  ctx: AgentContext,
  sandboxId: string,
  sel: z.output<typeof ProcessSelectorSchema>,
): Record<string, never> {
  processes.find(ctx.agent, sandboxId, sel).kill.abort('killed by the E2B client');
  return {};
}
