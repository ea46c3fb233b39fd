import { describe, expect, it, vi } from 'vitest';
import { create } from 'zustand';
import { pendingCall, type RunInfo, type ToolCallInfo } from '../../../shared/types/run.js';
import {
  appendText,
  CALL_RUNS_KEPT,
  createRunsSlice,
  mergeCall,
  OUTPUT_CALLS_KEPT,
  OUTPUT_CHARS_PER_CALL,
  plainText,
  type RunsSlice,
} from './runs-slice.js';

function call(over: Partial<ToolCallInfo> = {}): ToolCallInfo {
  return {
    ...pendingCall({ id: 'call_1', runId: 'run_1', index: 1, tool: 'exec', args: { argv: ['ls'] }, startedAt: '2024-01-01T00:00:00.000Z' }),
    ...over,
  };
}

function run(id: string): RunInfo {
  return {
    id,
    agent: 'a',
    key: null,
    sandboxId: 'sb',
    sandboxName: 'sb',
    status: 'active',
    startedAt: '2024-01-01T00:00:00.000Z',
    endedAt: null,
    calls: 1,
    failures: 0,
    outputBytes: 0,
    breaker: { state: 'closed', consecutiveFailures: 0, openedAt: null },
    budgets: { wallTimeMs: 1, maxCalls: 1, execTimeoutMs: 1, maxExecTimeoutMs: 1, outputBytes: 1, breaker: { failures: 1, cooldownMs: 1 } },
  };
}

const store = () => create<RunsSlice>()((...a) => createRunsSlice(...(a as unknown as Parameters<typeof createRunsSlice>)) as RunsSlice);

describe('calls', () => {
  it('keep call order and never go back to an older copy', () => {
    let list = mergeCall(undefined, call({ id: 'c2', index: 2 }));
    list = mergeCall(list, call({ id: 'c1', index: 1 }));
    expect(list.map((c) => c.id)).toEqual(['c1', 'c2']);
    list = mergeCall(list, call({ id: 'c1', index: 1, status: 'ok', ledgerSeqs: [1, 2] }));
    const same = mergeCall(list, call({ id: 'c1', index: 1, status: 'running', ledgerSeqs: [1] }));
    expect(same).toBe(list);
    expect(same[0]!.status).toBe('ok');
  });

  it('a run loaded with run.get keeps calls pushed while the request was out', () => {
    const s = store();
    s.getState().upsertCall(call({ id: 'c2', index: 2, status: 'ok', ledgerSeqs: [5] }));
    s.getState().setRunDetail({ ...run('run_1'), toolCalls: [call({ id: 'c1' }), call({ id: 'c2', index: 2, status: 'running' })] });
    const calls = s.getState().runCalls.run_1!;
    expect(calls.map((c) => [c.id, c.status])).toEqual([
      ['c1', 'pending'],
      ['c2', 'ok'],
    ]);
    expect(s.getState().runCallsComplete.run_1).toBe(true);
  });

  it(`are kept for ${CALL_RUNS_KEPT} runs, the selected one always`, () => {
    const s = store();
    s.getState().selectRun('run_0');
    for (let i = 0; i < CALL_RUNS_KEPT + 10; i++) s.getState().upsertCall(call({ id: `c${i}`, runId: `run_${i}` }));
    const kept = Object.keys(s.getState().runCalls);
    expect(kept).toHaveLength(CALL_RUNS_KEPT);
    expect(kept).toContain('run_0');
    expect(kept).toContain(`run_${CALL_RUNS_KEPT + 9}`);
    expect(kept).not.toContain('run_1');
  });
});

describe('output', () => {
  it('is plain text: terminal control sequences and stray CRs are dropped', () => {
    expect(plainText('\x1b[31mred\x1b[0m\r\nnext\x07 \x1b]0;title\x07ok\r')).toBe('red\nnext ok');
  });

  it('is bounded per call and marked cut', () => {
    let out = appendText(undefined, 'stdout', 'a'.repeat(OUTPUT_CHARS_PER_CALL - 2));
    out = appendText(out, 'stderr', 'bcd');
    expect(out.chars).toBe(OUTPUT_CHARS_PER_CALL);
    expect(out.cut).toBe(true);
    expect(out.segments.at(-1)).toEqual({ stream: 'stderr', text: 'bc' });
    expect(appendText(out, 'stdout', 'more')).toBe(out);
  });

  it('joins pieces of one stream and keeps the order of streams', () => {
    let out = appendText(undefined, 'stdout', 'a');
    out = appendText(out, 'stdout', 'b');
    out = appendText(out, 'stderr', 'c');
    out = appendText(out, 'stdout', 'd');
    expect(out.segments).toEqual([
      { stream: 'stdout', text: 'ab' },
      { stream: 'stderr', text: 'c' },
      { stream: 'stdout', text: 'd' },
    ]);
  });

  it(`is kept for the ${OUTPUT_CALLS_KEPT} calls most recently started`, () => {
    const s = store();
    for (let i = 0; i < OUTPUT_CALLS_KEPT + 5; i++) s.getState().appendOutput({ runId: 'r', callId: `c${i}`, stream: 'stdout', data: 'x' });
    const kept = Object.keys(s.getState().callOutput);
    expect(kept).toHaveLength(OUTPUT_CALLS_KEPT);
    expect(kept[0]).toBe('c5');
  });
});

describe('output with a hole in it', () => {
  it('is marked when the call was not seen starting, or was running when the link dropped', () => {
    const s = store();
    s.getState().appendOutput({ runId: 'r', callId: 'unseen', stream: 'stdout', data: 'x' });
    expect(s.getState().callOutput.unseen!.partial).toBe(true);
    s.getState().upsertCall(call({ id: 'seen', runId: 'r', status: 'running' }));
    s.getState().upsertCall(call({ id: 'done', runId: 'r', index: 2, status: 'ok', endedAt: '2024-01-01T00:00:01.000Z' }));
    s.getState().appendOutput({ runId: 'r', callId: 'seen', stream: 'stdout', data: 'a' });
    s.getState().appendOutput({ runId: 'r', callId: 'done', stream: 'stdout', data: 'b' });
    expect(s.getState().callOutput.seen!.partial).toBeUndefined();
    s.getState().resynced();
    expect(s.getState().callOutput.seen!.partial).toBe(true);
    expect(s.getState().callOutput.done!.partial).toBeUndefined();
  });
});

describe('approvals', () => {
  it('count down on this machine’s clock from when they were pushed, and leave when decided', () => {
    const s = store();
    // This machine's clock stands still for the spec, so "30 s from now" is exact on a busy machine too.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T12:00:00Z'));
    const requestedAt = new Date(Date.now() - 3_600_000).toISOString(); // a server clock an hour behind
    const deadline = new Date(Date.parse(requestedAt) + 30_000).toISOString();
    const a = {
      id: 'apr_1',
      runId: 'r',
      callId: 'c',
      agent: 'a',
      sandboxId: null,
      tool: 'exec' as const,
      summary: 'exec x',
      programs: ['x  (default)'],
      reason: 'r',
      requestedAt,
      deadline,
      status: 'pending' as const,
      decidedBy: null,
      decidedAt: null,
      decision: null,
    };
    s.getState().addApproval(a);
    expect(s.getState().approvals.apr_1!.localDeadline).toBe(Date.now() + 30_000);
    vi.useRealTimers();
    s.getState().removeApproval('apr_1');
    expect(s.getState().approvals).toEqual({});
  });
});
