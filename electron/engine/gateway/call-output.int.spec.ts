// A running exec's output reaches the event bus (and so every UI) while it runs, batched and bounded,
// against real Podman; the agent still gets every byte.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { RUN_OUTPUT_STREAM_BYTES, type EventMap } from '../../../shared/contracts/events.js';
import type { ToolCallInfo } from '../../../shared/types/run.js';
import { openTestEngine, type TestEngine } from '../../test-support/podman-fixture.js';
import { NO_AUDIT } from '../audit-sink.js';
import { WardenEngine } from '../engine.js';
import { ContextAuditSink } from './audit-context.js';
import { Gateway, type AgentContext } from './gateway.js';
import { defaultPolicyPath, parsePolicy } from './policy-load.js';

let t: TestEngine;
let engine: WardenEngine;
let gateway: Gateway;
let sandbox: string;
const ctx: AgentContext = { agent: 'streamer', runKey: null, trusted: true };

beforeAll(async () => {
  t = await openTestEngine();
  const audit = new ContextAuditSink(NO_AUDIT);
  engine = new WardenEngine(t.engine, audit, { actor: 'user' });
  const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');
  gateway = new Gateway(engine, audit, { policy: { ...policy, access: 'all' } });
  sandbox = (await t.create()).id;
});

afterAll(async () => {
  gateway?.close();
  // cleanup destroys through the Podman engine, which the Warden engine's close closes too.
  await t?.cleanup();
  engine?.close();
});

interface Seen {
  output: Array<EventMap['run.output'] & { at: number }>;
  finishedAt: number | null;
  stop(): void;
}

function watch(): Seen {
  const seen: Seen = { output: [], finishedAt: null, stop: () => undefined };
  const offs = [
    engine.events.on('run.output', (o) => seen.output.push({ ...o, at: Date.now() })),
    engine.events.on('run.call', (c: ToolCallInfo) => {
      if (c.tool === 'exec' && (c.status === 'ok' || c.status === 'failed')) seen.finishedAt ??= Date.now();
    }),
  ];
  seen.stop = () => offs.forEach((off) => off());
  return seen;
}

describe('run.output', () => {
  it('streams an exec’s output as it comes, before the call finishes', async () => {
    const seen = watch();
    const r = await gateway.exec(ctx, sandbox, { cmd: 'for i in 1 2 3; do echo line $i; echo warn $i >&2; sleep 0.4; done' });
    seen.stop();
    expect(r.exitCode).toBe(0);
    expect(seen.output.every((o) => o.runId === r.runId && o.callId === r.callId)).toBe(true);
    expect(
      seen.output
        .filter((o) => o.stream === 'stdout')
        .map((o) => o.data)
        .join(''),
    ).toBe('line 1\nline 2\nline 3\n');
    expect(
      seen.output
        .filter((o) => o.stream === 'stderr')
        .map((o) => o.data)
        .join(''),
    ).toBe('warn 1\nwarn 2\nwarn 3\n');
    // line 1 was pushed while the command still had ~0.8 s to run
    const first = seen.output.find((o) => o.data.includes('line 1'))!;
    expect(seen.finishedAt! - first.at).toBeGreaterThan(500);
    expect(seen.output.findIndex((o) => o.data.includes('line 1'))).toBeLessThan(seen.output.findIndex((o) => o.data.includes('line 3')));
  });

  it('pushes at most the first 256 KiB of a call; the agent still gets all of it', async () => {
    const seen = watch();
    let agentBytes = 0;
    const r = await gateway.exec(
      ctx,
      sandbox,
      { cmd: "head -c 1000000 /dev/zero | tr '\\0' a; echo tail" },
      { onStdout: (c) => void (agentBytes += c.length) },
    );
    seen.stop();
    expect(r.exitCode).toBe(0);
    expect(agentBytes).toBe(1_000_005);
    const streamed = seen.output.map((o) => o.data).join('');
    expect(streamed.length).toBe(RUN_OUTPUT_STREAM_BYTES);
    expect(streamed).toMatch(/^a+$/);
    // batched: a few messages of up to ~64 KiB, not one per chunk
    expect(seen.output.length).toBeGreaterThanOrEqual(4);
    expect(seen.output.length).toBeLessThan(64);
  });

  it('pushes nothing for a call policy stops', async () => {
    const seen = watch();
    await expect(gateway.exec({ agent: 'streamer', runKey: null }, sandbox, { cmd: 'echo hi; sudo id' })).rejects.toMatchObject({
      code: 'E_POLICY_DENIED',
      message: expect.stringMatching(/privileges/),
    });
    seen.stop();
    expect(seen.output).toEqual([]);
  });
});
