// `warden mcp` driven by the MCP SDK's own client over stdio, against a running Warden: a whole small
// coding task, with streamed progress, and every call in the server's run record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startServer, type RunningServer } from '../server/index.js';
import { openTestEngine, type TestEngine } from '../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';
import { MemoryAudit, defaultPolicy } from '../test-support/test-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
let t: TestEngine;
let server: RunningServer;
let client: Client;

type ToolResult = { content: Array<{ type: string; text: string }>; isError?: boolean };
const call = async (name: string, args: Record<string, unknown>, onprogress?: (p: { message?: string }) => void) =>
  (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : undefined)) as ToolResult;

beforeAll(async () => {
  t = await openTestEngine();
  server = await startServer({ home: t.home, policy: defaultPolicy(), podman: t.engine, audit: new MemoryAudit(), watch: false });
  const { token } = server.tokens.create('coder');
  client = new Client({ name: 'warden-spec', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', `${root}electron/cli/index.ts`, 'mcp', '--run', 'mcp-task'],
      cwd: root,
      env: { ...(process.env as Record<string, string>), WARDEN_HOME: t.home, WARDEN_TOKEN: token },
      stderr: 'inherit',
    }),
  );
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await t?.cleanup();
});

describe('warden mcp', () => {
  it('lists the tools a coding agent expects', async () => {
    const names = (await client.listTools()).tools.map((x) => x.name).sort();
    expect(names).toEqual([
      'create_sandbox',
      'destroy_sandbox',
      'exec',
      'list_files',
      'list_sandboxes',
      'read_file',
      'reset',
      'snapshot',
      'write_file',
    ]);
  });

  it('does a coding task end to end, with progress, through the gateway', async () => {
    const created = JSON.parse(
      (await call('create_sandbox', { name: `t-${t.runId}-mcp`, disk: '256m', labels: { [TEST_LABEL_KEY]: t.runId } })).content[0]!.text,
    ) as { id: string };
    const sb = created.id;
    expect((await t.engine.sandboxes.inspect(sb)).limits).toMatchObject({ diskBytes: 256 * 1024 ** 2, diskEnforced: true });
    expect(
      (await call('write_file', { sandbox: sb, path: 'calc.py', content: 'import sys\nprint(sum(int(a) for a in sys.argv[1:]))\n' }))
        .content[0]!.text,
    ).toMatch(/wrote \d+ bytes to \/workspace\/calc.py/);
    const progress: string[] = [];
    const r = await call('exec', { sandbox: sb, cmd: 'for i in 1 2 3; do python3 calc.py $i 10; sleep 0.05; done' }, (p) =>
      progress.push(p.message ?? ''),
    );
    expect(r.content[0]!.text).toContain('exit code: 0');
    expect(r.content[0]!.text).toContain('11\n12\n13\n');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.join('')).toContain('stdout: 11');
    expect((await call('list_files', { sandbox: sb })).content[0]!.text).toContain('calc.py');
    expect((await call('read_file', { sandbox: sb, path: '/workspace/calc.py' })).content[0]!.text).toContain('import sys');
    const denied = await call('exec', { sandbox: sb, cmd: ['sudo', 'id'] });
    expect(denied.isError).toBe(true);
    expect(denied.content[0]!.text).toMatch(/^E_POLICY_DENIED/);
    const outside = await call('read_file', { sandbox: sb, path: '/etc/passwd' });
    expect(outside.isError).toBe(true);
    expect((await call('destroy_sandbox', { sandbox: sb })).content[0]!.text).toMatch(/destroyed/);

    const runs = server.gateway.runs.list({ agent: 'coder' });
    expect(runs).toHaveLength(1);
    const detail = server.gateway.runs.detail(runs[0]!.id);
    expect(detail.key).toBe('mcp-task');
    expect(detail.toolCalls.map((c) => `${c.tool}:${c.status}`)).toEqual([
      'sandbox.create:ok',
      'file.write:ok',
      'exec:ok',
      'file.list:ok',
      'file.read:ok',
      'exec:denied',
      'file.read:denied',
      'sandbox.destroy:ok',
    ]);
  });
});
