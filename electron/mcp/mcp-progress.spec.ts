// MCP exec output to a client that stops reading: progress notifications not yet taken by the
// client stay bounded, and the command's output waits for them (issue 12, streams through MCP).
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { AgentApi } from './agent-api.js';
import { createMcpServer, MAX_PROGRESS_IN_FLIGHT } from './mcp-server.js';

describe('mcp exec progress', () => {
  it('holds the command back while the client is not taking notifications', async () => {
    const chunks = 500;
    let produced = 0;
    let producedWhenStalled = -1;
    const held: Array<() => void> = [];
    const api = {
      async 'sandbox.exec'(_request: unknown, onOutput?: (s: 'stdout' | 'stderr', t: string) => unknown) {
        for (let i = 0; i < chunks; i++) {
          produced++;
          const wait = onOutput?.('stdout', 'x'.repeat(1000));
          if (wait instanceof Promise) await wait;
        }
        return { code: 0, durationMs: 1, timedOut: false, truncated: false, stdout: Buffer.from('done'), stderr: Buffer.alloc(0) };
      },
    } as unknown as AgentApi;
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    // The client's end stops taking progress: each such send stays pending until released.
    const send = serverSide.send.bind(serverSide);
    let stalled = true;
    serverSide.send = (message: JSONRPCMessage, options) => {
      if (!stalled || !('method' in message) || message.method !== 'notifications/progress') return send(message, options);
      return new Promise<void>((resolve) => {
        held.push(() => void send(message, options).then(resolve));
        if (held.length >= MAX_PROGRESS_IN_FLIGHT) setImmediate(() => (producedWhenStalled = produced));
      });
    };
    await createMcpServer(api).connect(serverSide);
    const client = new Client({ name: 'spec', version: '1' });
    await client.connect(clientSide);
    let progress = 0;
    const result = client.callTool({ name: 'exec', arguments: { sandbox: 'sb', cmd: 'yes' } }, undefined, {
      onprogress: () => progress++,
      timeout: 60_000,
    });
    // Let the producer run as far as it can while nothing is taken.
    while (producedWhenStalled < 0 && produced < chunks) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(held.length).toBeLessThanOrEqual(MAX_PROGRESS_IN_FLIGHT);
    expect(produced).toBeLessThan(chunks);
    stalled = false;
    for (const release of held.splice(0)) release();
    const r = (await result) as { content: Array<{ text: string }> };
    expect(r.content[0]!.text).toContain('exit code: 0');
    expect(produced).toBe(chunks);
    await client.close();
  });
});
