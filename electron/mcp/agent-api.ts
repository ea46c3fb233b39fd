// What `warden mcp` (and other agent-side doors) need: the agent API's verbs, typed from the shared
// route map, over a running server (HTTP, with an agent token) or in-process through the same
// gateway. Either way the calls land in runs and the ledger the same way.
import type { AgentRequest } from '../../shared/contracts/agent-routes.js';
import type { ExecStreamEvent } from '../../shared/types/api.js';
import type { AgentContext, Gateway } from '../engine/gateway/gateway.js';
import type { AgentClient, AgentVerbs, AgentExecResult } from '../server/client.js';

/** What a door keeps of a command's output for its answer (MCP shows 100,000 characters of it). */
export const KEEP_OUTPUT_BYTES = 1024 * 1024;

/** The first KEEP_OUTPUT_BYTES of a stream; the rest is counted as cut, not held. */
class KeptOutput {
  private readonly parts: Buffer[] = [];
  private size = 0;
  cut = false;

  push(c: Buffer): void {
    const room = KEEP_OUTPUT_BYTES - this.size;
    if (c.length > room) this.cut = true;
    if (room <= 0) return;
    const part = c.length > room ? Buffer.from(c.subarray(0, room)) : c;
    this.parts.push(part);
    this.size += part.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** The verbs an agent's door offers besides exec, each exactly as the route map has it. */
const VERBS = [
  'sandbox.list',
  'sandbox.create',
  'sandbox.destroy',
  'files.read',
  'files.write',
  'files.list',
  'sandbox.snapshot',
  'sandbox.reset',
] as const;

export type AgentApi = AgentVerbs<(typeof VERBS)[number]> & {
  /**
   * Runs a command, keeping the first KEEP_OUTPUT_BYTES of each stream. onOutput may return a
   * promise: the command's output waits until it settles (backpressure).
   */
  'sandbox.exec'(
    request: AgentRequest<'sandbox.exec'>,
    onOutput?: (stream: 'stdout' | 'stderr', text: string) => unknown,
  ): Promise<AgentExecResult>;
};

export function remoteAgentApi(client: AgentClient): AgentApi {
  return {
    ...client.verbs(VERBS),
    async 'sandbox.exec'({ params: { id }, body }, onOutput) {
      const kept = { stdout: new KeptOutput(), stderr: new KeptOutput() };
      // A promise from onOutput is awaited before the stream is read on: the server then pauses the command.
      const r = await client.exec(
        id,
        body,
        (e: ExecStreamEvent) => {
          if (e.type !== 'stdout' && e.type !== 'stderr') return undefined;
          const bytes = Buffer.from(e.data, e.encoding === 'base64' ? 'base64' : 'utf8');
          kept[e.type].push(bytes);
          return onOutput?.(e.type, bytes.toString('utf8'));
        },
        { collect: false },
      );
      return {
        ...r,
        truncated: r.truncated || kept.stdout.cut || kept.stderr.cut,
        stdout: kept.stdout.bytes(),
        stderr: kept.stderr.bytes(),
      };
    },
  };
}

export function localAgentApi(gateway: Gateway, ctx: AgentContext): AgentApi {
  return {
    'sandbox.list': () => gateway.listSandboxes(ctx),
    'sandbox.create': (request) => gateway.createSandbox(ctx, request?.body ?? {}),
    'sandbox.destroy': ({ params }) => gateway.destroySandbox(ctx, params.id),
    'files.read': ({ params, query }) => gateway.files.read(ctx, params.id, query.path),
    'files.write': ({ params, query, body }) =>
      gateway.files.write(ctx, params.id, query.path, Buffer.from(body.buffer, body.byteOffset, body.byteLength)),
    'files.list': ({ params, query }) => gateway.files.list(ctx, params.id, query?.path),
    'sandbox.snapshot': ({ params, body }) => gateway.snapshots.snapshot(ctx, params.id, body?.tag),
    'sandbox.reset': ({ params, body }) => gateway.snapshots.reset(ctx, params.id, body.to),
    async 'sandbox.exec'({ params: { id }, body }, onOutput) {
      const out = new KeptOutput();
      const err = new KeptOutput();
      let waiting: Promise<unknown> | null = null;
      // A promise from onOutput pauses the command (false to the engine) until it settles.
      const pass = (stream: 'stdout' | 'stderr', c: Buffer) => {
        const r = onOutput?.(stream, c.toString('utf8'));
        if (!(r instanceof Promise)) return true;
        waiting = r;
        return false;
      };
      const r = await gateway.exec(ctx, id, body, {
        onStdout: (c) => (out.push(c), pass('stdout', c)),
        onStderr: (c) => (err.push(c), pass('stderr', c)),
        drain: async () => {
          await waiting?.catch(() => undefined);
          waiting = null;
        },
      });
      return {
        code: r.exitCode,
        durationMs: r.durationMs,
        timedOut: r.timedOut,
        truncated: r.truncated || out.cut || err.cut,
        stdoutBytes: r.stdoutBytes,
        stderrBytes: r.stderrBytes,
        oomKilled: r.oomKilled,
        callId: r.callId,
        stdout: out.bytes(),
        stderr: err.bytes(),
      };
    },
  };
}
