// The run archive on a real SQLite file: another live owner's runs stay active, a closed owner's
// become interrupted with their unanswered calls failed, and lists filter and page in start order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pendingCall, type RunInfo } from '../../../shared/types/run.js';
import { RunArchive } from './run-archive.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function file(): string {
  const dir = mkdtempSync(join(tmpdir(), 'warden-runs-'));
  dirs.push(dir);
  return join(dir, 'runs.db');
}

function run(id: string, fields: Partial<RunInfo> = {}): RunInfo {
  return {
    id,
    agent: 'alice',
    key: null,
    sandboxId: 'abc123',
    sandboxName: 'box',
    status: 'active',
    startedAt: new Date(0).toISOString(),
    endedAt: null,
    calls: 0,
    failures: 0,
    outputBytes: 0,
    breaker: { state: 'closed', consecutiveFailures: 0, openedAt: null },
    budgets: {} as RunInfo['budgets'],
    ...fields,
  };
}

describe('RunArchive', () => {
  it('keeps a live owner’s runs active and interrupts a closed owner’s, failing calls left without an answer', () => {
    const f = file();
    const a = RunArchive.open(f);
    a.saveRun(run('run_a'));
    const done = { ...pendingCall({ id: 'c1', runId: 'run_a', index: 1, tool: 'exec', args: {}, startedAt: 'x' }), status: 'ok' as const };
    a.saveCall(done);
    a.saveCall({ ...pendingCall({ id: 'c2', runId: 'run_a', index: 2, tool: 'exec', args: {}, startedAt: 'x' }), status: 'running' });
    const b = RunArchive.open(f);
    expect(b.detail('run_a')!.status).toBe('active');
    a.close();
    const after = b.detail('run_a')!;
    expect(after.status).toBe('interrupted');
    expect(after.toolCalls.map((c) => [c.id, c.status, c.error?.code ?? null])).toEqual([
      ['c1', 'ok', null],
      ['c2', 'failed', 'E_INTERRUPTED'],
    ]);
    expect(after.toolCalls[0]).toEqual(done);
    b.close();
  });

  it('filters by agent, sandbox name or id prefix, status and time, and pages before a run', () => {
    const archive = RunArchive.open(file());
    archive.saveRun(run('r1', { startedAt: '2026-01-01T00:00:00.000Z' }));
    archive.saveRun(run('r2', { agent: 'bob', sandboxId: 'def456', sandboxName: 'other', startedAt: '2026-01-02T00:00:00.000Z' }));
    archive.saveRun(run('r3', { status: 'finished', startedAt: '2026-01-03T00:00:00.000Z' }));
    // An update keeps a run's place in the order.
    archive.saveRun(run('r1', { calls: 2, startedAt: '2026-01-01T00:00:00.000Z' }));
    const ids = (q: Parameters<RunArchive['list']>[0]) => archive.list(q).map((r) => r.id);
    expect(ids({})).toEqual(['r1', 'r2', 'r3']);
    expect(archive.list({})[0]!.calls).toBe(2);
    expect(ids({ agent: 'alice' })).toEqual(['r1', 'r3']);
    expect(ids({ sandbox: 'other' })).toEqual(['r2']);
    expect(ids({ sandbox: 'abc' })).toEqual(['r1', 'r3']);
    expect(ids({ status: 'finished' })).toEqual(['r3']);
    expect(ids({ since: '2026-01-02T00:00:00Z' })).toEqual(['r2', 'r3']);
    expect(ids({ limit: 2 })).toEqual(['r2', 'r3']);
    expect(ids({ before: 'r2', limit: 2 })).toEqual(['r1']);
    expect(archive.detail('nope')).toBeNull();
    archive.close();
  });
});
