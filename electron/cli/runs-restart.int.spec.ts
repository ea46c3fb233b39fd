// Runs survive `warden serve`: an agent's run (one call denied) is the same run, with the same calls
// and decisions, after a kill -9 of serve and a new one on the same home, shown as interrupted; the
// run list filters and pages over that history.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunDetail } from '../../shared/types/run.js';
import { AgentClient } from '../server/client.js';
import { TokenStore } from '../server/tokens.js';
import { openTestEngine, type TestEngine } from '../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';
import { errorCodeOf } from '../test-support/error-code.js';

let t: TestEngine;
let tokens: { alice: string; user: string };

interface Serve {
  child: ChildProcess;
  url: string;
  exited: Promise<unknown>;
}

/** `warden serve` as a user starts it: its first stdout line is its URL. */
async function startServe(): Promise<Serve> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'electron/cli/index.ts', 'serve', '--port', '0'], {
    env: { ...process.env, WARDEN_HOME: t.home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    void exited.then(() => reject(new Error(`warden serve exited before it said where it listens: ${stderr}`)));
  });
  return { child, url, exited };
}

beforeAll(async () => {
  t = await openTestEngine();
  const store = new TokenStore(t.home);
  tokens = { alice: store.create('alice').token, user: store.userToken() };
});

afterAll(async () => {
  await t?.cleanup();
});

describe('runs across a kill -9 of warden serve', () => {
  it('come back with the same ids, calls and decisions, the active one interrupted', async () => {
    const first = await startServe();
    let before: RunDetail;
    let sandboxName: string;
    try {
      const alice = new AgentClient(first.url, tokens.alice, 'durable-1');
      const box = await alice.request('sandbox.create', { body: { name: `t-${t.runId}-runs`, labels: { [TEST_LABEL_KEY]: t.runId } } });
      sandboxName = box.name;
      await alice.request('files.write', { params: { id: box.id }, query: { path: 'a.txt' }, body: Buffer.from('one\n') });
      expect((await alice.exec(box.id, { cmd: 'cat a.txt' })).stdout.toString()).toBe('one\n');
      expect(await errorCodeOf(alice.exec(box.id, { cmd: 'sudo true' }))).toBe('E_POLICY_DENIED');
      // A second, finished run of another key, for the filters.
      const other = new AgentClient(first.url, tokens.alice, 'durable-2');
      await other.exec(box.id, { cmd: 'true' });
      const user = new AgentClient(first.url, tokens.user);
      const id = (await user.request('run.list')).find((r) => r.key === 'durable-1')!.id;
      before = await user.request('run.get', { params: { run: id } });
      expect(before.toolCalls.map((c) => [c.tool, c.status])).toEqual([
        ['sandbox.create', 'ok'],
        ['file.write', 'ok'],
        ['exec', 'ok'],
        ['exec', 'denied'],
      ]);
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
    }

    const second = await startServe();
    try {
      const user = new AgentClient(second.url, tokens.user);
      const runs = await user.request('run.list');
      const after = await user.request('run.get', { params: { run: before.id } });
      expect(runs.map((r) => r.id)).toContain(before.id);
      expect(after).toMatchObject({ id: before.id, key: 'durable-1', agent: 'alice', status: 'interrupted', sandboxName });
      expect(after.endedAt).not.toBeNull();
      // Every call as it was: ids, order, decisions, results and the ledger entries that hold them.
      expect(after.toolCalls).toEqual(before.toolCalls);
      expect(after.toolCalls[3]!.decision).toMatchObject({ action: 'deny' });

      // Filters and paging over the history: both of alice's runs, by sandbox name, by status, a page before the newest.
      const mine = await user.request('run.list', { query: { agent: 'alice', sandbox: sandboxName } });
      expect(mine.map((r) => r.key)).toEqual(['durable-1', 'durable-2']);
      expect((await user.request('run.list', { query: { status: 'interrupted' } })).map((r) => r.key)).toEqual(['durable-1', 'durable-2']);
      expect((await user.request('run.list', { query: { before: mine[1]!.id, limit: 1 } })).map((r) => r.id)).toEqual([before.id]);
      expect(await user.request('run.list', { query: { agent: 'bob' } })).toEqual([]);
      // An agent sees only its own history: alice's token lists both, another agent's none.
      const alice = new AgentClient(second.url, tokens.alice);
      expect((await alice.request('run.list')).map((r) => r.id)).toContain(before.id);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
