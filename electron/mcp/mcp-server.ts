// The MCP server (`warden mcp`): the tools a coding agent expects, each one a call through the
// gateway (so it is checked, counted in a run and recorded like any other door's call).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { toErrorInfo } from '../../shared/errors.js';
import { NETWORK_MODES, RUNTIMES } from '../../shared/types/sandbox.js';
import type { AgentApi } from './agent-api.js';

const MAX_TEXT = 100_000;
const PROGRESS_CHARS = 2000;
/**
 * Progress notifications written but not yet taken by the client (the stdio transport resolves a
 * send once stdout has drained): at this many, the command's output waits for the client.
 */
export const MAX_PROGRESS_IN_FLIGHT = 8;

function text(value: string) {
  return {
    content: [
      { type: 'text' as const, text: value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}\n…[cut at ${MAX_TEXT} characters]` : value },
    ],
  };
}

function failure(err: unknown) {
  const info = toErrorInfo(err);
  return {
    isError: true,
    content: [{ type: 'text' as const, text: `${info.code}: ${info.message}${info.hint ? `\nhint: ${info.hint}` : ''}` }],
  };
}

async function guarded<T>(body: () => Promise<T>) {
  try {
    return (await body()) as T;
  } catch (err) {
    return failure(err);
  }
}

export function createMcpServer(api: AgentApi, version = '0.1.0'): McpServer {
  const server = new McpServer(
    { name: 'warden', version },
    {
      instructions:
        'Sandboxes for running code safely. Create a sandbox, write files under /workspace, exec commands, read results, destroy it when done.',
    },
  );
  const sandbox = z.string().min(1).max(128).describe('sandbox id or name');
  const path = z.string().min(1).max(4096).describe('path under /workspace (relative paths are relative to /workspace)');

  server.registerTool(
    'create_sandbox',
    {
      description:
        'Create and start an isolated Linux sandbox (no network unless policy allows; files live in /workspace). Returns its id and name.',
      inputSchema: {
        name: z.string().optional(),
        image: z.string().optional(),
        labels: z.record(z.string(), z.string()).optional(),
        memory: z.string().optional().describe('e.g. 512m'),
        disk: z.string().optional().describe('disk limit, e.g. 4g'),
        cpus: z.number().optional(),
        network: z.enum(NETWORK_MODES).optional().describe('egress: out only through an HTTP(S) proxy that allows what the policy names'),
        runtime: z.enum(RUNTIMES).optional().describe('isolation: runsc is gVisor (a user-space kernel); policy may require one'),
        ttlSeconds: z.number().int().optional(),
      },
    },
    (args) =>
      guarded(async () => {
        const spec = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
        const info = await api['sandbox.create']({ body: spec });
        return text(
          JSON.stringify({
            id: info.id,
            name: info.name,
            image: info.image,
            network: info.network,
            runtime: info.runtime,
            state: info.state,
          }),
        );
      }),
  );

  server.registerTool('list_sandboxes', { description: 'List the sandboxes this agent may use.', inputSchema: {} }, () =>
    guarded(async () =>
      text(JSON.stringify((await api['sandbox.list']()).map((s) => ({ id: s.id, name: s.name, state: s.state, image: s.image })))),
    ),
  );

  server.registerTool(
    'exec',
    {
      description:
        'Run a command in a sandbox. `cmd` is an argv array or a shell string (run with sh -c). Output streams as progress notifications; the result has the exit code, stdout and stderr.',
      inputSchema: {
        sandbox,
        cmd: z.union([z.array(z.string()).min(1), z.string().min(1)]),
        cwd: z.string().optional(),
        timeoutMs: z.number().int().positive().optional(),
        stdin: z.string().optional(),
      },
    },
    (args, extra) =>
      guarded(async () => {
        const token = extra._meta?.progressToken;
        let progress = 0;
        let inFlight = 0;
        let wake: (() => void) | null = null;
        const r = await api['sandbox.exec'](
          {
            params: { id: args.sandbox },
            body: {
              cmd: args.cmd,
              ...(args.cwd ? { cwd: args.cwd } : {}),
              ...(args.timeoutMs ? { timeoutMs: args.timeoutMs } : {}),
              ...(args.stdin !== undefined ? { stdin: args.stdin } : {}),
            },
          },
          (stream, chunk) => {
            if (token === undefined) return;
            progress++;
            inFlight++;
            void extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress, message: `${stream}: ${chunk.slice(0, PROGRESS_CHARS)}` },
              })
              .catch(() => undefined)
              .finally(() => {
                inFlight--;
                wake?.();
                wake = null;
              });
            // A client that stops reading stdio holds the command back instead of queueing notifications.
            if (inFlight >= MAX_PROGRESS_IN_FLIGHT) return new Promise<void>((resolve) => (wake = resolve));
            return undefined;
          },
        );
        const body = [
          `exit code: ${r.code}${r.timedOut ? ' (timed out)' : ''}${r.truncated ? ' (output truncated)' : ''}`,
          `--- stdout ---\n${r.stdout.toString('utf8')}`,
          `--- stderr ---\n${r.stderr.toString('utf8')}`,
        ].join('\n');
        return { ...text(body), ...(r.code !== 0 ? { isError: false } : {}) };
      }),
  );

  server.registerTool(
    'read_file',
    { description: 'Read a text file from the sandbox workspace.', inputSchema: { sandbox, path } },
    (args) =>
      guarded(async () => {
        const data = await api['files.read']({ params: { id: args.sandbox }, query: { path: args.path } });
        return text(data.toString('utf8'));
      }),
  );

  server.registerTool(
    'write_file',
    {
      description: 'Write (create or replace) a file in the sandbox workspace; parent directories are created.',
      inputSchema: { sandbox, path, content: z.string() },
    },
    (args) =>
      guarded(async () => {
        const w = await api['files.write']({
          params: { id: args.sandbox },
          query: { path: args.path },
          body: Buffer.from(args.content, 'utf8'),
        });
        return text(`wrote ${w.bytes} bytes to ${w.path} (sha256 ${w.sha256})`);
      }),
  );

  server.registerTool(
    'list_files',
    { description: 'List a directory of the sandbox workspace (default /workspace).', inputSchema: { sandbox, path: path.optional() } },
    (args) =>
      guarded(async () => {
        const list = await api['files.list']({ params: { id: args.sandbox }, query: { path: args.path } });
        return text(
          list.entries
            .map((e) => `${e.type === 'dir' ? 'd' : e.type === 'symlink' ? 'l' : '-'} ${String(e.size).padStart(10)} ${e.name}`)
            .join('\n') || '(empty)',
        );
      }),
  );

  server.registerTool('destroy_sandbox', { description: 'Destroy a sandbox and everything in it.', inputSchema: { sandbox } }, (args) =>
    guarded(async () => {
      const gone = await api['sandbox.destroy']({ params: { id: args.sandbox } });
      return text(`destroyed ${gone.name}`);
    }),
  );

  const tag = z.string().min(1).max(64).describe('snapshot tag (letters, digits, _ . -)');
  server.registerTool(
    'snapshot',
    {
      description: 'Save the sandbox (root filesystem changes and /workspace) under a tag, to reset to later.',
      inputSchema: { sandbox, tag: tag.optional() },
    },
    (args) =>
      guarded(async () => {
        const s = await api['sandbox.snapshot']({ params: { id: args.sandbox }, body: args.tag ? { tag: args.tag } : {} });
        return text(
          `snapshot ${s.tag} of ${s.sandbox}: image ${s.imageId.slice(0, 12)} (${s.rootBytes} bytes), workspace ${s.workspaceBytes} bytes sha256 ${s.workspaceSha256}`,
        );
      }),
  );
  server.registerTool(
    'reset',
    {
      description: 'Put the sandbox back to a snapshot: the same name, its files as they were (running processes are not kept).',
      inputSchema: { sandbox, to: tag },
    },
    (args) =>
      guarded(async () => {
        const info = await api['sandbox.reset']({ params: { id: args.sandbox }, body: { to: args.to } });
        return text(`reset ${info.name} to ${args.to}`);
      }),
  );
  return server;
}
