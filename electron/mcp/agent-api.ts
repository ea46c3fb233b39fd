// What `warden mcp` (and other agent-side doors) need: one interface, over a running server (HTTP,
// with an agent token) or in-process through the same gateway. Either way the calls land in runs
// and the ledger the same way.
import type { ApiExecBody, ExecStreamEvent, FileList, FileWritten } from '../../shared/types/api.js';
import type { SandboxInfo } from '../../shared/types/sandbox.js';
import type { AgentContext, Gateway } from '../engine/gateway/gateway.js';
import type { WardenClient } from '../server/client.js';

export interface AgentExecResult {
  code: number;
  durationMs: number;
  timedOut: boolean;
  truncated: boolean;
  stdout: Buffer;
  stderr: Buffer;
}

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

export interface AgentApi {
  listSandboxes(): Promise<SandboxInfo[]>;
  createSandbox(spec: Record<string, unknown>): Promise<SandboxInfo>;
  destroySandbox(id: string): Promise<{ id: string; name: string }>;
  /** onOutput may return a promise: the command's output waits until it settles (backpressure). */
  exec(id: string, body: ApiExecBody, onOutput?: (stream: 'stdout' | 'stderr', text: string) => unknown): Promise<AgentExecResult>;
  readFile(id: string, path: string): Promise<Buffer>;
  writeFile(id: string, path: string, data: Buffer): Promise<FileWritten>;
  listFiles(id: string, path?: string): Promise<FileList>;
}

export function remoteAgentApi(client: WardenClient): AgentApi {
  return {
    listSandboxes: () => client.listSandboxes(),
    createSandbox: (spec) => client.createSandbox(spec),
    destroySandbox: (id) => client.destroySandbox(id),
    async exec(id, body, onOutput) {
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
      return { code: r.code, durationMs: r.durationMs, timedOut: r.timedOut, truncated: r.truncated || kept.stdout.cut || kept.stderr.cut, stdout: kept.stdout.bytes(), stderr: kept.stderr.bytes() };
    },
    readFile: (id, path) => client.readFile(id, path),
    writeFile: (id, path, data) => client.writeFile(id, path, data),
    listFiles: (id, path) => client.listFiles(id, path),
  };
}

export function localAgentApi(gateway: Gateway, ctx: AgentContext): AgentApi {
  return {
    listSandboxes: () => gateway.listSandboxes(ctx),
    createSandbox: (spec) => gateway.createSandbox(ctx, spec),
    destroySandbox: (id) => gateway.destroySandbox(ctx, id),
    async exec(id, body, onOutput) {
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
      return { code: r.exitCode, durationMs: r.durationMs, timedOut: r.timedOut, truncated: r.truncated || out.cut || err.cut, stdout: out.bytes(), stderr: err.bytes() };
    },
    readFile: (id, path) => gateway.readFile(ctx, id, path),
    writeFile: (id, path, data) => gateway.writeFile(ctx, id, path, data),
    listFiles: (id, path) => gateway.listFiles(ctx, id, path),
  };
}
