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

export interface AgentApi {
  listSandboxes(): Promise<SandboxInfo[]>;
  createSandbox(spec: Record<string, unknown>): Promise<SandboxInfo>;
  destroySandbox(id: string): Promise<{ id: string; name: string }>;
  exec(id: string, body: ApiExecBody, onOutput?: (stream: 'stdout' | 'stderr', text: string) => void): Promise<AgentExecResult>;
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
      const r = await client.exec(id, body, (e: ExecStreamEvent) => {
        if ((e.type === 'stdout' || e.type === 'stderr') && onOutput) onOutput(e.type, e.encoding === 'base64' ? Buffer.from(e.data, 'base64').toString('utf8') : e.data);
      });
      return { code: r.code, durationMs: r.durationMs, timedOut: r.timedOut, truncated: r.truncated, stdout: r.stdout, stderr: r.stderr };
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
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      const r = await gateway.exec(ctx, id, body, {
        onStdout: (c) => {
          out.push(c);
          onOutput?.('stdout', c.toString('utf8'));
        },
        onStderr: (c) => {
          err.push(c);
          onOutput?.('stderr', c.toString('utf8'));
        },
      });
      return { code: r.exitCode, durationMs: r.durationMs, timedOut: r.timedOut, truncated: r.truncated, stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
    },
    readFile: (id, path) => gateway.readFile(ctx, id, path),
    writeFile: (id, path, data) => gateway.writeFile(ctx, id, path, data),
    listFiles: (id, path) => gateway.listFiles(ctx, id, path),
  };
}
