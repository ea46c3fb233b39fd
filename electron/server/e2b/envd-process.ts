// envd's process.Process for the e2b SDK (sandbox.commands): Start runs the command through the
// gateway's exec (policy, approvals, budgets, the run and the ledger, as the agent API's exec does)
// and streams its start, output and end; SendSignal ends one of the caller's commands; List shows
// them. A pid is Warden's number for a command this server runs, not a process id in the sandbox.
import { posix } from 'node:path';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { Gateway } from '../../engine/gateway/gateway.js';
import type { AgentContext } from '../../engine/gateway/call-spec.js';
import type { ProcessInfo, ProcessSelectorSchema, ProcessStartRequestSchema } from '../../../shared/types/e2b.js';
import { WardenError } from '../../../shared/errors.js';
import type { StreamMeter } from '../stream-meter.js';
import { ConnectStream } from './connect-protocol.js';
import { E2bUnsupported } from './e2b-errors.js';
import { wardenPath } from './envd-paths.js';

interface LiveProcess extends ProcessInfo {
  agent: string;
  sandboxId: string;
  kill: AbortController;
}

const FIRST_PID = 1000;
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

/** Commands the E2B door is running, by pid. */
export class ProcessTable {
  private next = FIRST_PID;
  private readonly live = new Map<number, LiveProcess>();

  add(p: Omit<LiveProcess, 'pid' | 'kill'>): LiveProcess {
    const entry: LiveProcess = { ...p, pid: this.next++, kill: new AbortController() };
    this.live.set(entry.pid, entry);
    return entry;
  }

  remove(pid: number): void {
    this.live.delete(pid);
  }

  /** The caller's commands in one sandbox (another agent's are not there for it). */
  list(agent: string, sandboxId: string): LiveProcess[] {
    return [...this.live.values()].filter((p) => p.agent === agent && p.sandboxId === sandboxId);
  }

  find(agent: string, sandboxId: string, sel: z.output<typeof ProcessSelectorSchema>): LiveProcess {
    const found = this.list(agent, sandboxId).find((p) => (sel.pid !== undefined ? p.pid === sel.pid : p.tag === sel.tag));
    if (!found) throw new WardenError('E_NOT_FOUND', `no running command ${sel.pid ?? sel.tag ?? ''} in this sandbox`);
    return found;
  }
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
  if (request.pty !== undefined && request.pty !== null) throw new E2bUnsupported('a PTY (sandbox.pty)');
  const { process: config, tag } = request;
  const stream = new ConnectStream(reply, streams);
  const entry = processes.add({ agent: ctx.agent, sandboxId, config, ...(tag !== undefined ? { tag } : {}) });
  const encode = (field: 'stdout' | 'stderr') => (data: Buffer) => ({ event: { data: { [field]: data.toString('base64') } } });
  const stdout = stream.batcher(encode('stdout'));
  const stderr = stream.batcher(encode('stderr'));
  const alive = setInterval(() => stream.send({ event: { keepalive: {} } }), keepalive);
  const chunk = (batch: typeof stdout) => (c: Buffer) => {
    batch.push(c);
    return !stream.congested;
  };
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
        onStdout: chunk(stdout),
        onStderr: chunk(stderr),
        drain: stream.drained,
        // The client hanging up (its timeout, disconnect) or SendSignal ends the command.
        signal: AbortSignal.any([stream.gone, entry.kill.signal]),
        onRunning: () => stream.send({ event: { start: { pid: entry.pid } } }),
      },
    );
    stdout.end();
    stderr.end();
    const status = result.cancelled ? `killed (${result.cancelled})` : result.timedOut ? 'timed out' : `exit status ${result.exitCode}`;
    stream.send({ event: { end: { exitCode: result.exitCode, exited: !result.cancelled && !result.timedOut, status } } });
    stream.end();
  } catch (err) {
    stdout.end();
    stderr.end();
    stream.end(err);
  } finally {
    clearInterval(alive);
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
