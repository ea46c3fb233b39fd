// The smaller HTTP findings of issue 12: every error in the envelope (413, 431 too), serve listening
// where it says, one answer (404) for a missing sandbox and another agent's, and approvals recorded
// under the authenticated decider rather than a name in the request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { WardenError } from '../../shared/errors.js';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';

let ts: TestServer;
let sandbox: string;

beforeAll(async () => {
  ts = await openTestServer(
    policyWith((p) => {
      p.commands.rules.push({ command: ['git'], action: 'ask' });
      p.approvals.timeoutMs = 60_000;
    }),
  );
  sandbox = (await ts.agent('owner').request('sandbox.create', { body: { name: `t-${ts.t.runId}-own`, labels: ts.labels } })).id;
});

afterAll(async () => {
  await ts?.close();
});

function raw(opts: {
  host?: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: opts.host ?? '127.0.0.1', port: ts.server.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A request written byte for byte (repeated headers Node's client would not send), read to the end. */
function rawBytes(head: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const sock = connect(ts.server.port, '127.0.0.1', () => sock.end(`${head}Connection: close\r\n\r\n`));
    let text = '';
    sock.on('data', (c: Buffer) => (text += c.toString()));
    sock.on('error', reject);
    sock.on('end', () => {
      const [top, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number((top ?? '').split(' ')[1]), body: JSON.parse(rest.join('\r\n\r\n')) });
    });
  });
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: WardenError) => `${e.code}: ${e.message}`,
  );

describe('error answers', () => {
  it('answers 413 and 431 in the envelope, with a code, a message and a hint', async () => {
    const auth = { authorization: `Bearer ${ts.server.tokens.create('big').token}` };
    const tooBig = await raw({
      method: 'POST',
      path: `/v1/sandboxes/${sandbox}/exec`,
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ cmd: 'x'.repeat(2 << 20) }),
    });
    expect(tooBig.status).toBe(413);
    expect(JSON.parse(tooBig.body)).toEqual({ error: { code: 'E_TOO_LARGE', message: expect.any(String), hint: expect.any(String) } });
    const headers = await raw({ path: '/v1/sandboxes', headers: { ...auth, 'x-padding': 'y'.repeat(40_000) } });
    expect(headers.status).toBe(431);
    expect(JSON.parse(headers.body)).toEqual({ error: { code: 'E_TOO_LARGE', message: expect.any(String), hint: expect.any(String) } });
  });
});

describe('requests the guard refuses', () => {
  it('refuses a repeated Host, Origin or Authorization, in the envelope', async () => {
    const host = `127.0.0.1:${ts.server.port}`;
    const token = ts.server.tokens.create('twice').token;
    const auth = `Authorization: Bearer ${token}\r\n`;
    const ok = await rawBytes(`GET /v1/whoami HTTP/1.1\r\nHost: ${host}\r\n${auth}`);
    expect(ok.status).toBe(200);
    for (const repeated of [
      `Host: ${host}\r\nHost: evil.com\r\n${auth}`,
      `Host: ${host}\r\nOrigin: http://${host}\r\nOrigin: http://evil.com\r\n${auth}`,
      `Host: ${host}\r\n${auth}Authorization: Bearer other\r\n`,
    ]) {
      const r = await rawBytes(`GET /v1/whoami HTTP/1.1\r\n${repeated}`);
      expect(r.status, repeated).toBe(400);
      expect(r.body).toEqual({ error: { code: 'E_BAD_INPUT', message: expect.any(String), hint: expect.any(String) } });
    }
  });

  it('answers a URL that does not decode in the envelope', async () => {
    const token = ts.server.tokens.create('badurl').token;
    const r = await raw({ path: '/v1/sandboxes/%ff%fe', headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ error: { code: 'E_BAD_INPUT', message: expect.any(String) } });
  });
});

describe('another agent’s sandbox', () => {
  it('is answered exactly as a missing one (404), and the attempt is in the ledger', async () => {
    const other = ts.agent('snoop');
    const missing = `t-${ts.t.runId}-nope`;
    for (const [mine, theirs] of [
      [codeOf(other.exec(sandbox, { cmd: ['true'] })), codeOf(other.exec(missing, { cmd: ['true'] }))],
      [
        codeOf(other.request('files.read', { params: { id: sandbox }, query: { path: 'x' } })),
        codeOf(other.request('files.read', { params: { id: missing }, query: { path: 'x' } })),
      ],
      [
        codeOf(other.request('sandbox.destroy', { params: { id: sandbox } })),
        codeOf(other.request('sandbox.destroy', { params: { id: missing } })),
      ],
    ] as const) {
      expect((await mine).replace(sandbox, 'REF')).toBe((await theirs).replace(missing, 'REF'));
      expect(await mine).toMatch(/^E_NOT_FOUND/);
    }
    const token = ts.server.tokens.create('snoop2').token;
    for (const ref of [sandbox, missing]) {
      const r = await raw({ path: `/v1/sandboxes/${ref}`, headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(404);
    }
    expect(
      ts.audit.entries.filter((e) => e.kind === 'policy.denied' && e.actor === 'snoop' && e.sandboxId === sandbox).length,
    ).toBeGreaterThanOrEqual(3);
    expect((await ts.agent('owner').request('sandbox.list')).map((s) => s.id)).toContain(sandbox); // still there
  });
});

describe('approvals over HTTP', () => {
  it('records the authenticated decider, and refuses a name given in the request', async () => {
    const pending = ts
      .agent('owner', 'asks')
      .exec(sandbox, { cmd: ['git', '--version'] })
      .catch(() => undefined);
    let approval: { id: string } | undefined;
    while (!approval) {
      approval = (await ts.user().request('approval.list'))[0];
      if (!approval) await new Promise((r) => setTimeout(r, 20));
    }
    const auth = { authorization: `Bearer ${ts.server.tokens.userToken()}`, 'content-type': 'application/json' };
    const forged = await raw({
      method: 'POST',
      path: `/v1/approvals/${approval.id}`,
      headers: auth,
      body: JSON.stringify({ decision: 'approve-once', by: 'the auditor' }),
    });
    expect(forged.status).toBe(400);
    const ok = await raw({
      method: 'POST',
      path: `/v1/approvals/${approval.id}`,
      headers: auth,
      body: JSON.stringify({ decision: 'approve-once' }),
    });
    expect(ok.status).toBe(200);
    await pending;
    const decided = ts.audit.entries.filter((e) => e.kind === 'approval.decided');
    expect(decided.map((e) => [e.actor, (e.payload as { by: string }).by])).toEqual([['user', 'user']]);
  });
});

describe('warden serve', () => {
  it('says where it listens, and answers at every address it names', async () => {
    const home = mkdtempSync(join(tmpdir(), 'warden-serve-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'electron/cli/index.ts', 'serve', '--port', '0'], {
      env: { ...process.env, WARDEN_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const banner = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stderr! }).on('line', (line) => line.includes('serving') && resolve(line));
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
      });
      const port = Number(/127\.0\.0\.1:(\d+)/.exec(banner)![1]);
      const named = banner.includes('::1') ? ['127.0.0.1', '::1'] : ['127.0.0.1'];
      for (const host of named) {
        const answer = await new Promise<number | string>((resolve) => {
          const req = request(
            { host, port, path: '/v1/health', headers: { host: host === '::1' ? `[::1]:${port}` : `127.0.0.1:${port}` } },
            (res) => resolve(res.statusCode ?? 0),
          );
          req.on('error', (e) => resolve(e.message));
          req.end();
        });
        expect(answer, `${host} (banner: ${banner})`).toBe(200);
      }
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      rmSync(home, { recursive: true, force: true });
    }
  });
});
