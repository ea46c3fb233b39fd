// The agent API end to end against real Podman: an agent's whole task, then every adversarial case.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { spawnSync } from 'node:child_process';
import WebSocket from 'ws';
import { WardenError } from '../../shared/errors.js';
import { collectExec } from '../engine/podman/exec-session.js';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';
import { errorCodeOf } from '../test-support/error-code.js';

let ts: TestServer;
let sandbox: string;

async function sh(script: string): Promise<string> {
  const r = await collectExec(ts.t.engine.connection, sandbox, { cmd: ['sh', '-c', script] });
  return r.stdout.toString('utf8') + r.stderr.toString('utf8');
}

function rawRequest(opts: {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: ts.server.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

beforeAll(async () => {
  ts = await openTestServer(
    policyWith((p) => {
      p.commands.rules.push({ command: ['touch'], action: 'deny' }, { command: ['git'], action: 'ask' });
      // Long enough for the user in the approving spec to see and answer the ask on a loaded machine.
      p.approvals.timeoutMs = 2_000;
      // A cool-down wide enough that the calls meant to land inside it do, on a busy machine too.
      p.budgets.breaker = { failures: 2, cooldownMs: 2_000 };
      p.sandboxes = { 'steps-*': { budgets: { maxCalls: 5 } } };
      p.agents.maxOpenRuns = 1000; // the path specs open a run per attempt
    }),
  );
  const info = await ts.agent('alice').request('sandbox.create', { body: { name: `t-${ts.t.runId}-a`, labels: ts.labels } });
  sandbox = info.id;
  // Its automatic attestation lands now, not inside a spec that counts ledger entries.
  await ts.server.engine.attestations.idle();
});

afterAll(async () => {
  await ts?.close();
});

describe('an agent script over HTTP', () => {
  it('creates, writes, runs, reads, lists and destroys; the run and ledger show every call in order', async () => {
    const bob = ts.agent('bob', 'task-1');
    const before = ts.audit.entries.length;
    const box = await bob.request('sandbox.create', { body: { name: `t-${ts.t.runId}-bob`, labels: ts.labels } });
    expect(box.network).toBe('none');
    await bob.request('files.write', {
      params: { id: box.id },
      query: { path: 'src/hello.py' },
      body: Buffer.from('print("hello from", 6 * 7)\n'),
    });
    const events: string[] = [];
    const run = await bob.exec(box.id, { cmd: 'python3 src/hello.py > out.txt && cat out.txt' }, (e) => events.push(e.type));
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toBe('hello from 42\n');
    expect(events[0]).toBe('start');
    expect(events.at(-1)).toBe('exit');
    expect((await bob.request('files.read', { params: { id: box.id }, query: { path: '/workspace/out.txt' } })).toString()).toBe(
      'hello from 42\n',
    );
    const list = await bob.request('files.list', { params: { id: box.id } });
    expect(list.entries.map((e) => e.name)).toEqual(['out.txt', 'src']);
    await bob.request('sandbox.destroy', { params: { id: box.id } });

    const runs = await bob.request('run.list');
    expect(runs).toHaveLength(1);
    const detail = await bob.request('run.get', { params: { run: runs[0]!.id } });
    expect(detail).toMatchObject({ agent: 'bob', key: 'task-1', status: 'finished', sandboxId: box.id });
    expect(detail.toolCalls.map((c) => [c.tool, c.status])).toEqual([
      ['sandbox.create', 'ok'],
      ['file.write', 'ok'],
      ['exec', 'ok'],
      ['file.read', 'ok'],
      ['file.list', 'ok'],
      ['sandbox.destroy', 'ok'],
    ]);
    // The automatic attestation after create lands whenever it finishes: it is the engine's, not bob's.
    const attested = ts.audit.entries.slice(before).filter((e) => e.kind === 'sandbox.attested');
    expect(attested.every((e) => e.actor === 'system')).toBe(true);
    const mine = ts.audit.entries.slice(before).filter((e) => e.kind !== 'sandbox.attested');
    expect(mine.every((e) => e.actor === 'bob')).toBe(true);
    expect(mine.map((e) => e.kind)).toEqual([
      'policy.allowed',
      'sandbox.created',
      'policy.allowed',
      'file.written',
      'policy.allowed',
      'exec.started',
      'exec.finished',
      'policy.allowed',
      'file.read',
      'policy.allowed',
      'file.listed',
      'policy.allowed',
      'sandbox.destroyed',
    ]);
    // each call names its own ledger entries, and they come in call order
    const seqs = detail.toolCalls.flatMap((c) => c.ledgerSeqs);
    expect(seqs).toEqual(mine.map((e) => e.seq));
    const exec = detail.toolCalls[2]!;
    expect(exec.exitCode).toBe(0);
    expect(exec.preview).toBe('hello from 42\n');
    expect(mine.find((e) => e.kind === 'exec.finished')!.payload).toMatchObject({ stdoutDigest: exec.digests.stdout });
    // the chain holds: `warden audit verify` on this home
    const verify = spawnSync(process.execPath, ['--import', 'tsx', 'electron/cli/index.ts', 'audit', 'verify', '--json'], {
      env: { ...process.env, WARDEN_HOME: ts.t.home },
      encoding: 'utf8',
    });
    expect(verify.status, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, entries: ts.audit.entries.length });
  });

  it('streams binary output as base64 and text as text', async () => {
    const alice = ts.agent('alice');
    const r = await alice.exec(sandbox, { cmd: ['sh', '-c', "printf 'caf\\303\\251\\n'; printf '\\377\\000\\001' >&2"] });
    expect(r.stdout.toString('utf8')).toBe('café\n');
    expect([...r.stderr]).toEqual([0xff, 0, 1]);
  });
});

describe('tokens, Host and Origin', () => {
  it('refuses a missing, wrong or revoked token with 401 and does nothing', async () => {
    const entries = ts.audit.entries.length;
    const sandboxes = (await ts.t.engine.sandboxes.list()).length;
    const body = JSON.stringify({ name: `t-${ts.t.runId}-evil` });
    for (const headers of [{}, { authorization: 'Bearer wdn_nope' }, { authorization: 'Basic abc' }] as Array<Record<string, string>>) {
      const r = await rawRequest({
        method: 'POST',
        path: '/v1/sandboxes',
        headers: { ...headers, host: `127.0.0.1:${ts.server.port}`, 'content-type': 'application/json' },
        body,
      });
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'E_UNAUTHORIZED' } });
    }
    const { token } = ts.server.tokens.create('mallory');
    ts.server.tokens.revoke('mallory');
    const r = await rawRequest({
      method: 'POST',
      path: `/v1/sandboxes/${sandbox}/exec`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cmd: ['touch', '/workspace/x'] }),
    });
    expect(r.status).toBe(401);
    expect(ts.audit.entries.length).toBe(entries);
    expect((await ts.t.engine.sandboxes.list()).length).toBe(sandboxes);
  });

  it('refuses a foreign Host (DNS rebinding) and a cross-site Origin, on HTTP and WebSocket', async () => {
    const auth = { authorization: `Bearer ${ts.server.tokens.userToken()}` };
    expect((await rawRequest({ path: '/v1/sandboxes', headers: { ...auth, host: `evil.example:${ts.server.port}` } })).status).toBe(403);
    expect((await rawRequest({ path: '/v1/sandboxes', headers: { ...auth, host: `127.0.0.1:1` } })).status).toBe(403);
    expect((await rawRequest({ path: '/v1/sandboxes', headers: { ...auth, origin: 'http://evil.example' } })).status).toBe(403);
    expect((await rawRequest({ path: '/v1/sandboxes', headers: { ...auth, 'sec-fetch-site': 'cross-site' } })).status).toBe(403);
    expect((await rawRequest({ path: '/v1/sandboxes', headers: { ...auth, origin: `http://localhost:${ts.server.port}` } })).status).toBe(
      200,
    );
    const ws = (headers: Record<string, string>) =>
      new Promise<string>((resolve) => {
        const s = new WebSocket(`ws://127.0.0.1:${ts.server.port}/v1/live`, { headers });
        s.on('message', (m: Buffer) => {
          resolve(`message ${JSON.parse(m.toString()).type}`);
          s.close();
        });
        s.on('unexpected-response', (_req, res) => resolve(`status ${res.statusCode}`));
        s.on('error', () => resolve('error'));
      });
    expect(await ws({ ...auth, origin: 'http://evil.example' })).toBe('status 403');
    expect(await ws({})).toBe('status 401');
    expect(await ws(auth)).toBe('message snapshot');
  });

  it('answers oversized, malformed and non-JSON bodies with 413 / 400 / 415', async () => {
    const headers = { authorization: `Bearer ${ts.server.tokens.create('carol').token}` };
    const post = (body: string | Buffer, type = 'application/json') =>
      rawRequest({ method: 'POST', path: `/v1/sandboxes/${sandbox}/exec`, headers: { ...headers, 'content-type': type }, body });
    expect((await post(JSON.stringify({ cmd: ['echo', 'x'.repeat(2 * 1024 * 1024)] }))).status).toBe(413);
    expect((await post('{"cmd": [')).status).toBe(400);
    expect((await post(JSON.stringify({ cmd: 'true', user: 'root' }))).status).toBe(400);
    expect((await post(JSON.stringify({ cmd: [] }))).status).toBe(400);
    expect((await post('cmd=true', 'application/x-www-form-urlencoded')).status).toBe(415);
    expect((await post('{"cmd":"true"}', 'text/plain')).status).toBe(415);
    const big = await rawRequest({
      method: 'PUT',
      path: `/v1/sandboxes/${sandbox}/files?path=big`,
      headers: { ...headers, 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(17 * 1024 * 1024),
    });
    expect(big.status).toBe(413);
  });
});

describe('file access stays in /workspace', () => {
  beforeAll(async () => {
    await sh(`mkdir -p /tmp/outside && mkdir -p /workspace/d /workspace/real && echo OUTSIDE > /tmp/outside/secret && echo inside > /workspace/d/secret && echo inside > /workspace/real/secret
      ln -s / /workspace/root; ln -s /tmp/outside /workspace/link; ln -s link /workspace/chain; ln -s /nonexistent /workspace/dangling
      ln -s /tmp/outside/secret /workspace/last; ln /tmp/outside/secret /workspace/hard || ln /workspace/real/secret /workspace/hard`);
  });

  it('refuses every path trick', async () => {
    // a fresh run per attempt, so the breaker (2 failures here) does not answer instead of the path check
    let n = 0;
    const alice = new Proxy({} as ReturnType<TestServer['agent']>, {
      get: (_t, k: 'request') => {
        const c = ts.agent('alice', `paths-${n++}`);
        return c[k].bind(c);
      },
    });
    const read = (p: string) => errorCodeOf(alice.request('files.read', { params: { id: sandbox }, query: { path: p } }));
    expect(await read('../etc/passwd')).toBe('E_POLICY_DENIED');
    expect(await read('/etc/passwd')).toBe('E_POLICY_DENIED');
    expect(await read('/workspace/../etc/passwd')).toBe('E_POLICY_DENIED');
    expect(await read('/workspace2/x')).toBe('E_POLICY_DENIED');
    expect(await read('%2e%2e/etc/passwd')).toBe('E_NOT_FOUND'); // a literal name, still inside
    expect(await read('%252e%252e/etc/passwd')).toBe('E_NOT_FOUND');
    expect(await read('root/etc/passwd')).toBe('E_POLICY_DENIED');
    expect(await read('link/secret')).toBe('E_POLICY_DENIED');
    expect(await read('chain/secret')).toBe('E_POLICY_DENIED');
    expect(await read('dangling')).toBe('E_POLICY_DENIED');
    expect(await read('last')).toBe('E_POLICY_DENIED');
    expect(await read('hard')).toBe('E_POLICY_DENIED');
    expect(await errorCodeOf(alice.request('files.list', { params: { id: sandbox }, query: { path: 'root' } }))).toBe('E_POLICY_DENIED');
    expect(
      await errorCodeOf(alice.request('files.write', { params: { id: sandbox }, query: { path: 'last' }, body: Buffer.from('pwned') })),
    ).toBe('E_POLICY_DENIED');
    expect(
      await errorCodeOf(alice.request('files.write', { params: { id: sandbox }, query: { path: 'link/new' }, body: Buffer.from('pwned') })),
    ).toBe('E_POLICY_DENIED');
    expect(
      await errorCodeOf(alice.request('files.write', { params: { id: sandbox }, query: { path: 'hard' }, body: Buffer.from('pwned') })),
    ).toBe('E_POLICY_DENIED');
    expect(await sh('cat /tmp/outside/secret; ls /tmp/outside')).toBe('OUTSIDE\nsecret\n');
    expect((await alice.request('files.read', { params: { id: sandbox }, query: { path: 'd/secret' } })).toString()).toBe('inside\n');
    // URL-level tricks: encoded dots are decoded once (then refused as ".."), NUL is refused
    const auth = { authorization: `Bearer ${ts.server.tokens.create('dave').token}` };
    for (const [q, status] of [
      ['%2e%2e%2fetc%2fpasswd', 403],
      ['..%2f..%2fetc%2fpasswd', 403],
      ['a%00b', 400],
      ['%252e%252e%252fetc', 403],
    ] as const) {
      const r = await rawRequest({ path: `/v1/sandboxes/${sandbox}/files?path=${q}`, headers: auth });
      // dave does not own the sandbox: 404 (as if missing) whatever the path; alice's own view is checked above
      expect([status, 404]).toContain(r.status);
    }
    const aliceToken = ts.server.tokens.create('alice').token;
    expect(
      (
        await rawRequest({
          path: `/v1/sandboxes/${sandbox}/files?path=%2e%2e%2fetc%2fpasswd`,
          headers: { authorization: `Bearer ${aliceToken}` },
        })
      ).status,
    ).toBe(403);
    expect(
      (await rawRequest({ path: `/v1/sandboxes/${sandbox}/files?path=a%00b`, headers: { authorization: `Bearer ${aliceToken}` } })).status,
    ).toBe(400);
  });

  it('is not redirected by a directory swapped for a symlink between check and use', async () => {
    // flip /workspace/d between the real directory and a symlink to /tmp/outside as fast as the sandbox can
    const swapper = collectExec(ts.t.engine.connection, sandbox, {
      cmd: [
        'sh',
        '-c',
        'end=$(( $(date +%s) + 3 )); while [ $(date +%s) -lt $end ]; do mv /workspace/d /workspace/d.real && ln -s /tmp/outside /workspace/d && rm /workspace/d && mv /workspace/d.real /workspace/d; done',
      ],
      timeoutMs: 10_000,
    }).catch(() => undefined);
    const seen = new Set<string>();
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        try {
          seen.add(
            (await ts.agent('alice', `swap-${i}`).request('files.read', { params: { id: sandbox }, query: { path: 'd/secret' } }))
              .toString()
              .trim(),
          );
        } catch (err) {
          seen.add((err as WardenError).code);
        }
      }),
    );
    await swapper;
    expect(seen.has('OUTSIDE')).toBe(false);
    // E_CONFLICT: the run's breaker (2 failures here) opened after denials, which is also safe
    expect([...seen], [...seen].join()).toSatisfy((all: string[]) =>
      all.every((s) => ['inside', 'E_POLICY_DENIED', 'E_NOT_FOUND', 'E_CONFLICT'].includes(s)),
    );
    expect(seen.has('inside')).toBe(true);
  });
});

describe('policy, budgets and the breaker', () => {
  it('a denied command leaves no trace inside the sandbox', async () => {
    let n = 0;
    for (const cmd of [
      ['touch', '/workspace/pwned'],
      ['/usr/bin/touch', '/workspace/pwned'],
      ['sh', '-c', "echo x; 't''ouch' /workspace/pwned"],
      ['env', 'touch', '/workspace/pwned'],
    ]) {
      expect(await errorCodeOf(ts.agent('alice', `deny-${n++}`).exec(sandbox, { cmd }))).toBe('E_POLICY_DENIED');
    }
    expect(await sh('ls /workspace/pwned 2>&1 || true')).toContain('No such file');
    const denied = ts.audit.entries.filter((e) => e.kind === 'policy.denied' && (e.payload as { tool: string }).tool === 'exec');
    expect(denied.length).toBeGreaterThanOrEqual(4);
    expect(ts.audit.entries.filter((e) => e.kind === 'exec.started' && JSON.stringify(e.payload).includes('pwned'))).toHaveLength(0);
  });

  it('an exec’s decision is written with exec.started, in one commit before the command runs; one the ledger refuses does not run', async () => {
    const ledger = ts.audit.ledger;
    const commits = ledger.stats.commits;
    const before = ledger.head().size;
    const r = await ts.agent('alice', 'one-commit').exec(sandbox, { cmd: ['true'] });
    expect(r.code).toBe(0);
    expect(ledger.stats.commits - commits).toBe(2);
    const [allowed, started, finished] = ledger.entries({ fromSeq: before + 1 });
    expect([allowed?.kind, started?.kind, finished?.kind]).toEqual(['policy.allowed', 'exec.started', 'exec.finished']);
    expect(allowed!.time).toBe(started!.time); // one transaction
    expect(allowed!.payload).toMatchObject({ callId: r.callId, tool: 'exec' });

    // The ledger refuses: the agent gets E_LEDGER, not a "start", and the command never ran.
    const { append, appendBatch, appendBatchAsync } = ts.audit;
    const refuse = () => {
      throw new Error('disk full');
    };
    ts.audit.append = refuse;
    ts.audit.appendBatch = refuse;
    ts.audit.appendBatchAsync = async () => refuse();
    const events: string[] = [];
    try {
      expect(
        await errorCodeOf(
          ts.agent('alice', 'refused').exec(sandbox, { cmd: ['sh', '-c', 'echo > /workspace/ran-unrecorded'] }, (e) => events.push(e.type)),
        ),
      ).toBe('E_LEDGER');
    } finally {
      ts.audit.append = append;
      ts.audit.appendBatch = appendBatch;
      ts.audit.appendBatchAsync = appendBatchAsync;
    }
    expect(events).toEqual([]);
    expect(await sh('ls /workspace/ran-unrecorded 2>&1 || true')).toContain('No such file');
  });

  it('an ask nobody answers is denied after the timeout, and one the user approves runs', async () => {
    const alice = ts.agent('alice', 'ask-test');
    const t0 = Date.now();
    const events: string[] = [];
    const err = await alice.exec(sandbox, { cmd: ['git', '--version'] }, (e) => events.push(e.type)).catch((e: WardenError) => e);
    expect(err).toBeInstanceOf(WardenError);
    expect((err as WardenError).message).toMatch(/nobody approved within 2 s .*headless/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_900); // not before its deadline (a lower bound: a busy machine only adds)
    expect(events).toEqual(['approval', 'error']);
    const user = ts.user();
    const pending = alice.exec(sandbox, { cmd: ['sh', '-c', 'git --version >/dev/null 2>&1; echo approved'] });
    let approval;
    // Until the ask is there (not for at most 1 s): the spec's timeout is the hang guard.
    while (!approval) {
      approval = (await user.request('approval.list'))[0];
      if (!approval) await new Promise((r) => setTimeout(r, 20));
    }
    expect(await errorCodeOf(alice.request('approval.decide', { params: { id: approval!.id }, body: { decision: 'approve-once' } }))).toBe(
      'E_POLICY_DENIED',
    ); // agents cannot approve
    await user.request('approval.decide', { params: { id: approval!.id }, body: { decision: 'approve-run' } });
    expect((await pending).stdout.toString()).toBe('approved\n');
    // approved for the rest of the run: no second ask
    expect((await alice.exec(sandbox, { cmd: ['git', '--version'] })).code).toBeDefined();
    const decided = ts.audit.entries.filter((e) => e.kind === 'approval.decided');
    expect(decided.map((e) => [e.actor, (e.payload as { status: string }).status])).toEqual([
      ['system', 'timeout'],
      ['user', 'approved'],
    ]);
  });

  it('the breaker opens after K failures, lets one probe through after the cool-down, and closes on success', async () => {
    const alice = ts.agent('alice', 'breaker-test');
    const breakerDenials = () =>
      ts.audit.entries.filter((e) => e.kind === 'policy.denied' && JSON.stringify(e.payload).includes('"breaker"')).length;
    const denialsBefore = breakerDenials();
    // Waits for the breaker itself to report the cool-down over, rather than sleeping past it.
    const coolDown = async () => {
      while ((await alice.request('run.list')).find((x) => x.key === 'breaker-test')?.breaker.state !== 'half-open')
        await new Promise((res) => setTimeout(res, 50));
    };
    const run = (cmd: string) =>
      alice.exec(sandbox, { cmd }).then(
        (r) => `exit ${r.code}`,
        (e: WardenError) => e.code,
      );
    expect(await run('false')).toBe('exit 1');
    expect(await run('false')).toBe('exit 1');
    expect(await run('true')).toBe('E_CONFLICT'); // open
    const r = await rawRequest({
      method: 'POST',
      path: `/v1/sandboxes/${sandbox}/exec`,
      headers: {
        authorization: `Bearer ${ts.server.tokens.create('alice').token}`,
        'x-warden-run': 'breaker-test',
        'content-type': 'application/json',
      },
      body: '{"cmd":"true"}',
    });
    expect(r.status).toBe(503);
    await coolDown();
    expect(await run('false')).toBe('exit 1'); // the probe fails: open again
    expect(await run('true')).toBe('E_CONFLICT');
    await coolDown();
    expect(await run('true')).toBe('exit 0'); // the probe succeeds: closed
    expect(await run('true')).toBe('exit 0');
    const detail = (await alice.request('run.list')).find((x) => x.key === 'breaker-test')!;
    expect(detail.breaker.state).toBe('closed');
    expect(breakerDenials() - denialsBefore).toBe(3);
  });

  it('N parallel calls at the step limit: exactly the allowed number succeed', async () => {
    const erin = ts.agent('erin', 'steps');
    const box = await erin.request('sandbox.create', { body: { name: `steps-${ts.t.runId}`, labels: ts.labels } });
    // the create was call 1 of 5: four more may run
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        erin.exec(box.id, { cmd: ['true'] }).then(
          () => 'ok',
          (e: WardenError) => e.code,
        ),
      ),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(4);
    expect(results.filter((r) => r === 'E_POLICY_DENIED')).toHaveLength(8);
    await ts.server.engine['sandbox.destroy']({ ref: box.id });
  });

  it('refuses privileged asks at create, and sandboxes of other agents', async () => {
    const alice = ts.agent('alice');
    for (const spec of [
      { privileged: true },
      { workspace: '/' },
      { capAdd: ['SYS_ADMIN'] },
      { devices: ['/dev/kmsg'] },
      { network: 'nat' },
      { memory: '64g' },
      { disk: '64g' },
      { image: 'docker.io/library/alpine' },
    ]) {
      expect(await errorCodeOf(alice.request('sandbox.create', { body: { ...spec, labels: ts.labels } })), JSON.stringify(spec)).toBe(
        'E_POLICY_DENIED',
      );
    }
    const mallory = ts.agent('mallory2');
    expect(await errorCodeOf(mallory.exec(sandbox, { cmd: ['true'] }))).toBe('E_NOT_FOUND');
    expect(await errorCodeOf(mallory.request('files.read', { params: { id: sandbox }, query: { path: 'd/secret' } }))).toBe('E_NOT_FOUND');
    expect((await mallory.request('sandbox.list')).map((s) => s.id)).not.toContain(sandbox);
  });
});
