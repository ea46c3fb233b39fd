// A revoked token ends its holder's streams in flight (red team: an exec kept streaming after
// `warden token revoke`, only new requests got 401). The revocation comes from another TokenStore on
// the same home, as `warden token revoke` in another process does it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { openTestServer, type TestServer } from '../test-support/test-server.js';
import { AgentClient } from './client.js';
import { TokenStore } from './tokens.js';

let ts: TestServer;
beforeAll(async () => {
  ts = await openTestServer();
});

afterAll(async () => {
  await ts?.close();
});

describe('a token revoked while its holder streams', () => {
  it('ends the exec stream in flight (the command is cancelled), the run follower and the /v1/live socket', async () => {
    const { token } = ts.server.tokens.create('victim');
    const client = new AgentClient(ts.server.url, token, 'revoked-run');
    const own = (await client.request('sandbox.create', { body: { name: `t-${ts.t.runId}-victim`, labels: ts.labels } })).id;

    const live = new WebSocket(`ws://127.0.0.1:${ts.server.port}/v1/live`, { headers: { authorization: `Bearer ${token}` } });
    await new Promise((resolve, reject) => live.once('message', resolve).once('error', reject));
    const liveClosed = new Promise((resolve) => live.once('close', resolve));

    let started!: (runId: string) => void;
    const running = new Promise<string>((r) => (started = r));
    const finished = ts.audit.nextEntry((e) => e.kind === 'exec.finished' && e.actor === 'victim');
    const exec = client
      .exec(own, { cmd: ['sleep', '30'] }, (e) => e.type === 'start' && started(e.runId))
      .then(
        () => 'ended normally',
        (err: Error) => err.message,
      );
    const runId = await running;
    // A follower of that run's events, on the same token.
    let snapshot!: () => void;
    const following = new Promise<void>((r) => (snapshot = r));
    const followed = client
      .stream('run.events', { params: { run: runId } }, () => snapshot())
      .then(
        () => 'ended',
        () => 'ended',
      );
    await following;

    new TokenStore(ts.t.home).revoke('victim');

    expect(await exec).not.toBe('ended normally');
    expect((await finished).payload).toMatchObject({ cancelled: 'tokenRevoked' });
    await liveClosed;
    expect(await followed).toBe('ended');
  });
});
