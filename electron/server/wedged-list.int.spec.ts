// A wedged sandbox hangs neither the sandbox list (engine/podman/sandbox-list.ts) nor GET /v1/sandboxes.
// Forced at the HTTP level (wedge-proxy.ts): Podman never answers for one container, nor for the list
// over all of them (it waits on every container), while the rest passes to the real Podman. The bounds
// are given here; what is asserted is what the list says, never how long it took.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PodmanEngine } from '../engine/podman/podman-engine.js';
import { useTestEngine } from '../test-support/podman-fixture.js';
import { startWedgeProxy, type WedgeProxy } from '../test-support/wedge-proxy.js';
import { startServer } from './index.js';
import { AgentClient } from './client.js';
import { errorCodeOf } from '../test-support/error-code.js';
import { listPoolContainers } from '../engine/pool/pool-containers.js';

const t = useTestEngine();
let proxy: WedgeProxy;
const opened: PodmanEngine[] = [];

/** The whole list is wedged for good, so its bound can be short; one sandbox's is long enough for a busy host to answer. */
const BOUNDS = { wholeMs: 200, sandboxMs: 5_000 };

async function throughProxy(): Promise<PodmanEngine> {
  const engine = await PodmanEngine.open({ home: t.home, socketPath: proxy.socketPath, startService: false, listBounds: BOUNDS });
  opened.push(engine);
  return engine;
}

beforeAll(async () => {
  proxy = await startWedgeProxy();
});
afterAll(async () => {
  for (const engine of opened) engine.close();
  await proxy.close();
});

describe('the sandbox list with a wedged sandbox', () => {
  it('marks the wedged one unreachable with what to do, lists the rest as they are, and keeps the engine connected', async () => {
    const stuck = await t.create();
    const fine = await t.create();
    const engine = await throughProxy();
    // This process has seen both (every inspect or create is remembered).
    await engine.sandboxes.inspect(stuck.id);
    await engine.sandboxes.inspect(fine.id);
    proxy.wedge(stuck.id);
    proxy.wedgeWholeList();

    const rows = await engine.sandboxes.list();
    const stuckRow = rows.find((r) => r.id === stuck.id)!;
    const fineRow = rows.find((r) => r.id === fine.id)!;
    expect(stuckRow.unreachable).toMatchObject({
      code: 'E_TIMEOUT',
      message: expect.stringMatching(/did not answer for sandbox .* within 5 s/),
    });
    expect(stuckRow.unreachable!.hint).toContain(`podman rm -f ${stuck.id.slice(0, 12)}`);
    expect(stuckRow.name).toBe(stuck.name);
    expect(fineRow).toMatchObject({ state: 'running' });
    expect(fineRow.unreachable).toBeUndefined();
    // The whole list and the wedged one were really asked, and never answered.
    expect(proxy.held()).toBeGreaterThanOrEqual(2);

    // An inspect for a view is bounded as well; other calls still go through.
    expect(await errorCodeOf(engine.sandboxes.inspect(stuck.id))).toBe('E_TIMEOUT');
    expect(engine.connection.status).toBe('connected');

    // An agent's calls into it look it up first: bounded too, so they fail instead of hanging.
    const server = await startServer({ home: t.home, podman: engine, watch: false, announce: false, pool: false });
    try {
      const agent = new AgentClient(server.url, server.tokens.userToken());
      const inspected = await agent.raw('GET', `/v1/sandboxes/${stuck.id}`);
      expect(inspected.status).toBe(504);
      expect(await inspected.json()).toMatchObject({ error: { code: 'E_TIMEOUT', hint: expect.stringMatching(/podman rm -f/) } });
      expect(await errorCodeOf(agent.exec(stuck.id, { cmd: 'true' }))).toBe('E_TIMEOUT');
      expect((await agent.raw('GET', `/v1/sandboxes/${stuck.id}/files?path=/workspace`)).status).toBe(504);
      // The healthy one is served as ever meanwhile.
      expect((await agent.raw('GET', `/v1/sandboxes/${fine.id}`)).status).toBe(200);
    } finally {
      await server.close();
    }
    expect((await engine.sandboxes.stop(fine.id)).state).toBe('exited');

    // One removed while the list is wedged leaves it (it is not shown as last seen).
    await t.engine.sandboxes.destroy(fine.id);
    const after = await engine.sandboxes.list();
    expect(after.map((r) => r.id)).toEqual([stuck.id]);

    // Unwedged: the same process lists it as it is again.
    proxy.unwedge();
    const healed = await engine.sandboxes.list();
    expect(healed.find((r) => r.id === stuck.id)).toMatchObject({ state: 'running' });
    expect(healed.find((r) => r.id === stuck.id)!.unreachable).toBeUndefined();
  });

  it('a process that has seen nothing gets E_TIMEOUT for the whole list, through the API too', async () => {
    proxy.wedgeWholeList();
    try {
      const engine = await throughProxy();
      const err = await engine.sandboxes.list().then(
        () => null,
        (e: unknown) => e as { code: string; message: string; hint: string },
      );
      expect(err).toMatchObject({ code: 'E_TIMEOUT', message: 'Podman did not answer the sandbox list within 0.2 s' });
      expect(err!.hint).toMatch(/podman rm -f <id>/);

      // The pool's own list at a door's start is bounded the same way (the door then runs without a pool).
      expect(await errorCodeOf(listPoolContainers(engine.connection, engine.sandboxes.homeId, 200))).toBe('E_TIMEOUT');

      const server = await startServer({ home: t.home, podman: engine, watch: false, announce: false, pool: false });
      try {
        const answer = await new AgentClient(server.url, server.tokens.userToken()).raw('GET', '/v1/sandboxes');
        expect(answer.status).toBe(504);
        expect(await answer.json()).toMatchObject({ error: { code: 'E_TIMEOUT', hint: expect.stringMatching(/podman rm -f/) } });
      } finally {
        await server.close();
      }
    } finally {
      proxy.unwedge();
    }
  });
});
