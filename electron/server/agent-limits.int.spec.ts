// Budgets and limits an agent cannot slip past with parallel calls or fresh run keys, on a real
// server and a real Podman: a run's output budget under parallel execs, create.maxSandboxes under
// parallel creates, and the per-agent limits (calls per minute, execs at once) no run key resets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WardenError } from '../../shared/errors.js';
import { collectExec } from '../engine/podman/exec-session.js';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';

const MiB = 1024 * 1024;
let ts: TestServer;
let box: string;

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof WardenError ? e.code : String(e)),
  );

beforeAll(async () => {
  ts = await openTestServer(
    policyWith((p) => {
      p.budgets.outputBytes = MiB;
      p.create.maxSandboxes = 3;
      p.agents.concurrentExecs = 4;
    }),
  );
  box = (await ts.agent('olga').request('sandbox.create', { body: { name: `t-${ts.t.runId}-olga`, labels: ts.labels } })).id;
});

afterAll(async () => {
  await ts?.close();
});

describe("a run's output budget", () => {
  it('holds under parallel execs: four 1 MiB execs in a 1 MiB run get 1 MiB between them', async () => {
    const olga = ts.agent('olga', 'parallel-output');
    const results = await Promise.all(Array.from({ length: 4 }, () => olga.exec(box, { cmd: ['head', '-c', String(MiB), '/dev/zero'] })));
    const received = results.reduce((n, r) => n + r.stdout.length, 0);
    expect(received).toBeLessThanOrEqual(MiB);
    expect(results.filter((r) => r.truncated).length).toBeGreaterThanOrEqual(3);
    const run = (await olga.request('run.list')).find((r) => r.key === 'parallel-output')!;
    expect(run.outputBytes).toBeLessThanOrEqual(MiB);
    // the budget is used: the next exec in the run is refused before it runs
    expect(await outcome(olga.exec(box, { cmd: ['true'] }))).toBe('E_POLICY_DENIED');
  });

  it('counts stdout and stderr together', async () => {
    const r = await ts
      .agent('olga', 'two-streams')
      .exec(box, { cmd: ['sh', '-c', `head -c ${MiB} /dev/zero; head -c ${MiB} /dev/zero >&2`] });
    expect(r.stdout.length + r.stderr.length).toBeLessThanOrEqual(MiB);
    expect(r.truncated).toBe(true);
  });
});

describe('create.maxSandboxes', () => {
  it('holds under parallel creates: 3 of 8 succeed with a limit of 3', async () => {
    const petra = ts.agent('petra');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        outcome(petra.request('sandbox.create', { body: { name: `t-${ts.t.runId}-petra-${i}`, labels: ts.labels } })),
      ),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(3);
    expect(results.filter((r) => r === 'E_POLICY_DENIED')).toHaveLength(5);
    expect(await petra.request('sandbox.list')).toHaveLength(3);
  });
});

describe('per-agent limits no run key resets', () => {
  it('execs at once: a fifth exec of the agent is refused while four run, in any run', async () => {
    const gate = `/workspace/go-${Date.now()}`;
    const olga = (key: string) => ts.agent('olga', key);
    const started: string[] = [];
    // Waits for the four start events themselves (or one exec ending first), however slow the machine.
    let fourStarted!: () => void;
    const allStarted = new Promise<void>((resolve) => (fourStarted = resolve));
    const wait = `while [ ! -e ${gate} ]; do sleep 0.05; done; echo done`;
    const running = [0, 1, 2, 3].map((i) =>
      olga(`held-${i}`).exec(box, { cmd: ['sh', '-c', wait] }, (e) => {
        if (e.type === 'start' && started.push(`held-${i}`) === 4) fourStarted();
      }),
    );
    await Promise.race([allStarted, Promise.all(running).then(() => undefined)]);
    expect(started).toHaveLength(4);
    const err = await olga('fresh-key')
      .exec(box, { cmd: ['true'] })
      .catch((e: WardenError) => e);
    expect(err).toMatchObject({ code: 'E_POLICY_DENIED', message: expect.stringContaining('4 execs at once') });
    await collectExec(ts.t.engine.connection, box, { cmd: ['touch', gate] });
    expect((await Promise.all(running)).map((r) => r.stdout.toString())).toEqual(Array(4).fill('done\n'));
    expect((await olga('after').exec(box, { cmd: ['true'] })).code).toBe(0);
  });

  it('calls per minute: twelve calls with twelve run keys, five run', async () => {
    const ts2 = await openTestServer(policyWith((p) => (p.agents.callsPerMinute = 5)));
    try {
      const quinn = ts2.agent('quinn');
      const own = await quinn.withRun('key-0').request('sandbox.create', { body: { name: `t-${ts2.t.runId}-q`, labels: ts2.labels } });
      const results: string[] = [];
      for (let i = 1; i < 12; i++) results.push(await outcome(quinn.withRun(`key-${i}`).exec(own.id, { cmd: ['true'] })));
      expect(results.filter((r) => r === 'ok')).toHaveLength(4);
      expect(results.filter((r) => r === 'E_POLICY_DENIED')).toHaveLength(7);
      const denials = ts2.audit.entries.filter((e) => e.kind === 'policy.denied' && e.actor === 'quinn');
      expect(denials.map((e) => (e.payload as { decision: { source: string } }).decision.source)).toEqual(
        Array(7).fill('agents.callsPerMinute'),
      );
    } finally {
      await ts2.close();
    }
  });
});
