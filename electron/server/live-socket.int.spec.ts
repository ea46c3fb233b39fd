// /v1/live (issue 12): frames are at most 64 KiB whatever the message (a snapshot of thousands of
// runs is sent in parts), and a client that stops reading is closed (1013) once it is a bounded
// amount behind, instead of serve queueing for it without end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect } from 'node:net';
import type { RunInfo } from '../../shared/types/run.js';
import { openTestServer, type TestServer } from '../test-support/test-server.js';
import { LIVE_FRAME_BYTES } from './live-frames.js';
import { STREAM_MAX_QUEUED } from './stream-meter.js';
import { DEFAULT_RUN_PAGE } from '../engine/gateway/run-archive.js';

let ts: TestServer;

beforeAll(async () => {
  ts = await openTestServer();
  const runs = ts.server.gateway.runs;
  // Enough runs (with the longest keys) for a snapshot far over one frame.
  // (Unlimited: the per-agent cap on open runs is another spec's business.)
  for (let i = 0; i < 3000; i++)
    runs.open(`agent-${i % 7}`, `${'k'.repeat(120)}-${i}`, null, () => ts.server.gateway.policy.budgets, { unlimited: true });
});

afterAll(async () => {
  await ts?.close();
});

function openLive(): WebSocket {
  return new WebSocket(`ws://127.0.0.1:${ts.server.port}/v1/live`, {
    headers: { authorization: `Bearer ${ts.server.tokens.userToken()}` },
  });
}

describe('/v1/live', () => {
  it('sends no frame over 64 KiB: a large snapshot comes in parts that join to the whole', async () => {
    const ws = openLive();
    const sizes: number[] = [];
    let joined = '';
    const snapshot = await new Promise<{ runs: RunInfo[] }>((resolve, reject) => {
      ws.on('message', (m: Buffer) => {
        sizes.push(m.length);
        const msg = JSON.parse(m.toString()) as { type: string; of?: string; last?: boolean; data?: string; payload?: { runs: RunInfo[] } };
        if (msg.type === 'snapshot') resolve(msg.payload!);
        if (msg.type === 'part' && msg.of === 'snapshot') {
          joined += msg.data;
          if (msg.last) resolve((JSON.parse(joined) as { payload: { runs: RunInfo[] } }).payload);
        }
      });
      ws.on('error', reject);
    });
    ws.close();
    // The snapshot holds the newest page of runs (runs.db keeps the rest for paging): still far over one frame.
    expect(snapshot.runs).toHaveLength(DEFAULT_RUN_PAGE);
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(LIVE_FRAME_BYTES);
  });

  it('closes a socket whose client stopped reading once it is a bounded amount behind', async () => {
    const ws = openLive();
    await new Promise((r) => ws.once('open', r));
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const cutBefore = ts.server.streams?.cutOff ?? 0;
    const big = { ...ts.server.gateway.runs.list()[0]!, key: 'x'.repeat(100) };
    let emitted = 0;
    // Events keep coming (as from busy agents) until the server gives up on this client, or the
    // old behaviour shows: far more queued than the bound allows.
    while ((ts.server.streams?.cutOff ?? 0) === cutBefore && emitted < 16 * STREAM_MAX_QUEUED) {
      for (let i = 0; i < 200; i++) {
        ts.server.engine.events.emit('run.updated', { ...big, agent: `a${i}`, key: `${'y'.repeat(2000)}${emitted}` });
        emitted += 2200;
      }
      await new Promise((r) => setImmediate(r));
    }
    expect(ts.server.streams.cutOff).toBeGreaterThan(cutBefore);
    expect(ts.server.streams.peakQueuedBytes).toBeLessThanOrEqual(STREAM_MAX_QUEUED + LIVE_FRAME_BYTES);
    ws.terminate();
  });

  it('ends a run follower (/v1/runs/{run}/events) that stopped reading once it is a bounded amount behind', async () => {
    const run = ts.server.gateway.runs.open('follower', 'followed', null, () => ts.server.gateway.policy.budgets);
    const socket = connect(ts.server.port, '127.0.0.1');
    socket.write(
      `GET /v1/runs/${run.id}/events HTTP/1.1\r\nHost: 127.0.0.1:${ts.server.port}\r\nAuthorization: Bearer ${ts.server.tokens.userToken()}\r\n\r\n`,
    );
    await new Promise((r) => socket.once('data', r));
    socket.pause();
    ts.server.streams.peakQueuedBytes = 0; // this answer's peak, not the sockets' above
    const cutBefore = ts.server.streams?.cutOff ?? 0;
    let emitted = 0;
    while ((ts.server.streams?.cutOff ?? 0) === cutBefore && emitted < 16 * STREAM_MAX_QUEUED) {
      for (let i = 0; i < 200; i++) {
        ts.server.engine.events.emit('run.call', { id: `c${emitted}`, runId: run.id, preview: 'z'.repeat(4000) } as never);
        emitted += 4100;
      }
      await new Promise((r) => setImmediate(r));
    }
    socket.destroy();
    expect(ts.server.streams.cutOff).toBeGreaterThan(cutBefore);
    expect(ts.server.streams.peakQueuedBytes).toBeLessThanOrEqual(STREAM_MAX_QUEUED);
  });
});
