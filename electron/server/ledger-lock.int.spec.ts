// Another process holding the ledger's write lock must not freeze serve (issue 12): health answers
// while the lock is held, a call that needs the ledger fails closed (nothing runs), and a denial
// the ledger cannot take is said out loud and written once the lock is gone.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import Database from 'better-sqlite3';
import type { WardenError } from '../../shared/errors.js';
import type { LedgerEntry } from '../../shared/types/ledger.js';
import { collectExec } from '../engine/podman/exec-session.js';
import { ledgerFile } from '../engine/open-warden.js';
import { openTestServer, policyWith, type TestServer } from '../test-support/test-server.js';

let ts: TestServer;
let sandbox: string;

beforeAll(async () => {
  // Shorter than the default 15 s, but longer than health takes to answer on a loaded machine: the
  // spec asserts that health answers while an exec still waits on the lock, before it fails closed.
  ts = await openTestServer(
    policyWith((p) => p.commands.rules.push({ command: ['touch'], action: 'deny' })),
    { busyTimeoutMs: 6000 },
  );
  sandbox = (await ts.agent('locker').request('sandbox.create', { body: { name: `t-${ts.t.runId}-lock`, labels: ts.labels } })).id;
});

afterAll(async () => {
  await ts?.close();
});

/** Another process's connection holding BEGIN IMMEDIATE until released. */
function holdLock(): { release(): void } {
  const other = new Database(ledgerFile(ts.t.home));
  other.exec('BEGIN IMMEDIATE');
  return {
    release() {
      other.exec('ROLLBACK');
      other.close();
    },
  };
}

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ran',
    (e: WardenError) => `${e.code}: ${e.message}`,
  );

describe('a ledger locked by another process', () => {
  it('does not hold up health; an exec under the lock fails closed and nothing runs', async () => {
    const lock = holdLock();
    const order: string[] = [];
    let execResult = '';
    try {
      const runKey = 'under-lock';
      const exec = outcome(ts.agent('locker', runKey).exec(sandbox, { cmd: ['sh', '-c', 'echo > /workspace/ran-under-lock'] })).then(
        (r) => {
          execResult = r;
          order.push('exec');
        },
      );
      // The call is past the door and waiting on the ledger before health is asked.
      await until(() => ts.server.gateway.runs.list({ agent: 'locker' }).some((r) => r.key === runKey));
      const health = fetch(`${ts.server.url}/v1/health`).then(async (res) => {
        expect(await res.json()).toEqual({ result: { ok: true } });
        order.push('health');
      });
      await Promise.all([exec, health]);
    } finally {
      lock.release(); // only after both answered: each answered while the lock was held
    }
    expect(order).toEqual(['health', 'exec']);
    expect(execResult).toMatch(/^E_LEDGER: .*locked by another process/);
    const ls = await collectExec(ts.t.engine.connection, sandbox, { cmd: ['sh', '-c', 'ls /workspace/ran-under-lock 2>&1 || true'] });
    expect(ls.stdout.toString()).toContain('No such file');
    expect(ts.audit.entries.filter((e) => e.kind === 'exec.started' && JSON.stringify(e.payload).includes('ran-under-lock'))).toHaveLength(
      0,
    );
  });

  it('says when a denial could not be recorded, warns, and records it once the lock is gone', async () => {
    const warnings: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      warnings.push(String(chunk));
      return true;
    });
    const late = new Promise<LedgerEntry>((resolve) => {
      const off = ts.audit.ledger.subscribe((e) => {
        if (e.kind === 'policy.denied' && JSON.stringify(e.payload).includes('denied-under-lock')) {
          off();
          resolve(e);
        }
      });
    });
    const lock = holdLock();
    let result: string;
    try {
      result = await outcome(ts.agent('locker', 'deny-under-lock').exec(sandbox, { cmd: ['touch', '/workspace/denied-under-lock'] }));
      expect(warnings.join('')).toMatch(/WARNING: the ledger did not take a policy.denied entry/);
    } finally {
      lock.release();
    }
    try {
      expect(result).toMatch(/^E_POLICY_DENIED: .*the ledger could not record this denial/);
      const entry = await late;
      expect(entry.payload).toMatchObject({ recordedLate: true, tool: 'exec' });
    } finally {
      spy.mockRestore();
    }
  });
});
