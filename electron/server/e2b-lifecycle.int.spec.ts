// The real `e2b` SDK against `warden serve` and real Podman, for a sandbox's life after create:
// setTimeout and connect's timeout (a Warden-side TTL the reaper honours over the create's label,
// bounded by the policy's max TTL), pause and resume (runc and gVisor), each through the gateway:
// a call in the agent's run, an entry in the ledger, another agent's sandbox "not found".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandExitError, Sandbox } from 'e2b';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';
import { failure, pointE2bAt } from '../test-support/e2b-sdk.js';

let ts: TestServer;
const AGENT = 'e2b-life';
const MAX_TTL_S = 3600;
let restoreEnv = () => {};

const create = (timeoutMs = 600_000) => Sandbox.create({ metadata: { [TEST_LABEL_KEY]: ts.t.runId }, timeoutMs });
/** Seconds from now until the sandbox's endAt, as the SDK reads it. */
const secondsLeft = async (sbx: Sandbox) => ((await sbx.getInfo()).endAt.getTime() - Date.now()) / 1000;
const entriesOf = (kind: string, sandboxId: string) => ts.audit.entries.filter((e) => e.kind === kind && e.sandboxId === sandboxId);
const toolsOf = (sandboxId: string) =>
  ts.server.gateway.runs
    .list({ agent: AGENT })
    .filter((r) => r.sandboxId === sandboxId)
    .flatMap((r) => ts.server.gateway.runs.detail(r.id).toolCalls.map((c) => c.tool));

beforeAll(async () => {
  ts = await openTestServer(
    policyWith((p) => {
      p.create.maxTtlSeconds = MAX_TTL_S;
    }),
  );
  restoreEnv = pointE2bAt(ts, AGENT);
});

afterAll(async () => {
  restoreEnv();
  await ts?.close();
});

describe('the e2b SDK: setTimeout and connect with a timeout', () => {
  it("sets a new TTL from now, longer or shorter, seen in getInfo's endAt and recorded with both deadlines", async () => {
    const sbx = await create(600_000);
    expect(await secondsLeft(sbx)).toBeLessThanOrEqual(600);
    await sbx.setTimeout(1_800_000);
    const longer = await secondsLeft(sbx);
    expect(longer).toBeGreaterThan(600);
    expect(longer).toBeLessThanOrEqual(1800);
    await sbx.setTimeout(120_000);
    expect(await secondsLeft(sbx)).toBeLessThanOrEqual(120);
    const set = entriesOf('sandbox.ttl-set', sbx.sandboxId);
    expect(set).toHaveLength(2);
    const [first, second] = set.map((e) => e.payload as { from: string; to: string; ttlSeconds: number });
    expect(first!.ttlSeconds).toBe(1800);
    expect(Date.parse(first!.to)).toBeGreaterThan(Date.parse(first!.from));
    expect(second!.from).toBe(first!.to);
    expect(set.every((e) => e.actor === AGENT)).toBe(true);
    expect(toolsOf(sbx.sandboxId).filter((t) => t === 'sandbox.ttl')).toHaveLength(2);
    // Warden's own API and the engine see the same deadline.
    const viaApi = await ts.agent(AGENT).request('sandbox.inspect', { params: { id: sbx.sandboxId } });
    expect(viaApi.expiresAt).toBe(second!.to);
    await sbx.kill();
  });

  it("refuses a TTL over the policy's max as Warden's policy, and leaves the deadline as it was", async () => {
    const sbx = await create(600_000);
    const before = (await sbx.getInfo()).endAt.getTime();
    const err = await failure(sbx.setTimeout((MAX_TTL_S + 1) * 1000));
    expect(err.message).toContain('Warden policy');
    expect(err.message).toContain(String(MAX_TTL_S));
    expect((await sbx.getInfo()).endAt.getTime()).toBe(before);
    // connect's timeout is bounded the same way.
    expect((await failure(Sandbox.connect(sbx.sandboxId, { timeoutMs: (MAX_TTL_S + 1) * 1000 }))).message).toContain('Warden policy');
    // An agent may not take the TTL away through Warden's own API either; the user may.
    const none = await failure(ts.agent(AGENT).request('sandbox.ttl', { params: { id: sbx.sandboxId }, body: { ttlSeconds: null } }));
    expect(none.message).toMatch(/TTL away/);
    const forever = await ts.user().request('sandbox.ttl', { params: { id: sbx.sandboxId }, body: { ttlSeconds: null } });
    expect(forever.expiresAt).toBeNull();
    const denied = ts.audit.entries.filter((e) => e.kind === 'policy.denied' && e.sandboxId === sbx.sandboxId);
    expect(denied.length).toBeGreaterThanOrEqual(3);
    await sbx.kill();
  });

  it('connect with a timeout only ever extends the deadline, as on E2B', async () => {
    const sbx = await create(900_000);
    await Sandbox.connect(sbx.sandboxId, { timeoutMs: 60_000 });
    expect(await secondsLeft(sbx)).toBeGreaterThan(600);
    await Sandbox.connect(sbx.sandboxId, { timeoutMs: 2_400_000 });
    expect(await secondsLeft(sbx)).toBeGreaterThan(900);
    expect(entriesOf('sandbox.ttl-set', sbx.sandboxId)).toHaveLength(1);
    await sbx.kill();
  });

  it("the reaper honours the new deadline over the create's label, both ways", async () => {
    const shortened = await create(600_000);
    const lengthened = await create(60_000);
    await shortened.setTimeout(1000);
    await lengthened.setTimeout(MAX_TTL_S * 1000);
    // Two minutes on: the label of one has passed, the record of the other has.
    const reaped = await ts.server.engine.reapExpired(new Date(Date.now() + 120_000));
    const names = await Promise.all(
      [shortened, lengthened].map(async (s) => (await ts.server.engine.resolveSandbox(s.sandboxId).catch(() => null))?.name),
    );
    expect(names[0]).toBeUndefined();
    expect(names[1]).toBeDefined();
    expect(reaped).not.toContain(names[1]);
    expect(entriesOf('sandbox.expired', shortened.sandboxId)).toHaveLength(1);
    await lengthened.kill();
  });

  it("answers another agent's sandbox id as not found for setTimeout, pause and connect", async () => {
    const sbx = await create();
    const other = ts.server.tokens.create('someone-else').token;
    for (const attempt of [
      () => Sandbox.setTimeout(sbx.sandboxId, 60_000, { apiKey: other }),
      () => Sandbox.pause(sbx.sandboxId, { apiKey: other }),
      () => Sandbox.connect(sbx.sandboxId, { apiKey: other, timeoutMs: 60_000 }),
    ])
      expect((await failure(attempt())).message).toMatch(/not found/i);
    expect((await sbx.getInfo()).state).toBe('running');
    expect(entriesOf('sandbox.ttl-set', sbx.sandboxId)).toHaveLength(0);
    await sbx.kill();
  });
});

describe('the e2b SDK: pause and resume', () => {
  for (const runtime of ['runc', 'runsc'] as const)
    it(`pauses a ${runtime} sandbox: calls into it fail at once, saying so; connect resumes it`, async () => {
      // The E2B door cannot ask for a runtime: the agent makes it through Warden's API, then connects.
      const made = await ts
        .agent(AGENT)
        .request('sandbox.create', { body: { runtime, labels: { [TEST_LABEL_KEY]: ts.t.runId }, ttlSeconds: 600 } });
      const sbx = await Sandbox.connect(made.id);
      await sbx.files.write('kept.txt', 'before the pause\n');
      expect(await sbx.pause()).toBe(true);
      expect((await sbx.getInfo()).state).toBe('paused');
      expect((await Sandbox.list({ query: { state: ['paused'] } }).nextItems()).map((s) => s.sandboxId)).toContain(sbx.sandboxId);
      expect(await sbx.isRunning()).toBe(false);
      expect((await failure(sbx.commands.run('echo hi'))).message).toContain('paused');
      expect((await failure(sbx.files.read('kept.txt'))).message).toContain('paused');
      // Already paused: the SDK's false.
      expect(await sbx.pause()).toBe(false);

      const back = await Sandbox.connect(sbx.sandboxId);
      expect((await back.getInfo()).state).toBe('running');
      expect((await back.commands.run('cat kept.txt')).stdout).toBe('before the pause\n');
      expect(await back.isRunning()).toBe(true);
      const kinds = ts.audit.entries.filter((e) => e.sandboxId === sbx.sandboxId && e.actor === AGENT).map((e) => e.kind);
      expect(kinds).toEqual(expect.arrayContaining(['sandbox.paused', 'sandbox.resumed']));
      expect(toolsOf(sbx.sandboxId)).toEqual(expect.arrayContaining(['sandbox.pause', 'sandbox.resume']));
      await back.kill();
    });

  it('ends a command running when its sandbox is paused with an error, not a hang', async () => {
    const sbx = await create();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const handle = await sbx.commands.run('echo up; sleep 600', { background: true, onStdout: () => started() });
    await running;
    let watchEnded!: (err?: Error) => void;
    const watchExit = new Promise<Error | undefined>((resolve) => (watchEnded = resolve));
    await sbx.files.watchDir('.', () => undefined, { timeoutMs: 0, onExit: (err) => watchEnded(err) });
    const finished = ts.audit.nextEntry((e) => e.kind === 'exec.finished' && e.sandboxId === sbx.sandboxId);
    await sbx.pause();
    // Ended before the freeze (a frozen one's stream could only hang until the SDK's own timeout).
    expect((await finished).payload).toMatchObject({ cancelled: 'the sandbox was paused' });
    expect(await failure(handle.wait())).toBeInstanceOf(CommandExitError);
    // A watch's next look is refused, and ends the watch with that error.
    expect((await watchExit)?.message).toContain('paused');
    await Sandbox.connect(sbx.sandboxId);
    await sbx.kill();
  });

  it('refuses what Warden cannot do: a pause that keeps only the files, a resume by reboot', async () => {
    const sbx = await create();
    expect((await failure(sbx.pause({ keepMemory: false }))).message).toContain('not supported by Warden');
    await sbx.pause();
    expect((await failure(Sandbox.connect(sbx.sandboxId, { onResume: 'reboot' }))).message).toContain('not supported by Warden');
    expect((await sbx.getInfo()).state).toBe('paused');
    // A paused sandbox still expires at its deadline.
    await sbx.setTimeout(1000);
    await ts.server.engine.reapExpired(new Date(Date.now() + 120_000));
    expect(await Sandbox.list().nextItems()).not.toContainEqual(expect.objectContaining({ sandboxId: sbx.sandboxId }));
    expect(entriesOf('sandbox.expired', sbx.sandboxId)).toHaveLength(1);
  });
});
