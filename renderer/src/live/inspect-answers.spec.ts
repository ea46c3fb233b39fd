// Inspect answers never put a row back to what it was before a newer write: forced with answers
// held and released in the order that broke a row (a stop's event looked up, a start clicked, the
// old answer last).
import { describe, expect, it } from 'vitest';
import { WardenError } from '../../../shared/errors.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { inspectInto, STALE_ASKS, type InspectRows } from './inspect-answers.js';

const box = (state: SandboxInfo['state']): SandboxInfo => ({
  id: 'b'.repeat(64),
  name: 'box',
  image: 'img',
  state,
  runtime: 'runc',
  network: 'none',
  workspace: null,
  limits: { memoryBytes: 1, cpus: 1, pids: 1, readOnlyRoot: false, tmpSizeBytes: null, diskBytes: null, diskEnforced: false },
  createdAt: '2026-01-01T00:00:00Z',
  startedAt: null,
  expiresAt: null,
  labels: {},
  exitCode: null,
  oomKilled: false,
  exitReason: null,
});

/** Rows in a map; each ask is held until the spec answers it. */
function heldRows(first: SandboxInfo) {
  const rows = new Map([[first.id, first]]);
  const asks: Array<{ answer(info: SandboxInfo): void; fail(err: Error): void }> = [];
  const api: InspectRows = {
    ask: () => new Promise((answer, fail) => asks.push({ answer, fail })),
    row: (id) => rows.get(id),
    put: (info) => rows.set(info.id, info),
    remove: (id) => rows.delete(id),
  };
  return { api, rows, asks };
}

describe('inspect answers', () => {
  it('asks again when an action rewrote the row meanwhile, and applies the newer answer', async () => {
    const exited = box('exited');
    const { api, rows, asks } = heldRows(exited);
    const done = inspectInto(api, exited.id); // the stop's event, looked up
    rows.set(exited.id, box('running')); // the start's own result lands first
    asks[0]!.answer(box('exited')); // then the old answer
    await new Promise((r) => setTimeout(r, 0)); // what the answer set off has run
    expect(asks).toHaveLength(2);
    expect(rows.get(exited.id)!.state).toBe('running');
    asks[1]!.answer(box('running'));
    await done;
    expect(rows.get(exited.id)!.state).toBe('running');
  });

  it('applies an answer when nothing wrote the row meanwhile', async () => {
    const { api, rows, asks } = heldRows(box('running'));
    const done = inspectInto(api, box('running').id);
    asks[0]!.answer(box('paused'));
    await done;
    expect(asks).toHaveLength(1);
    expect(rows.get(box('running').id)!.state).toBe('paused');
  });

  it('gives up asking again after a few rewrites, and applies the last answer', async () => {
    const { api, rows, asks } = heldRows(box('running'));
    const id = box('running').id;
    const done = inspectInto(api, id);
    for (let i = 0; i <= STALE_ASKS; i++) {
      await new Promise((r) => setTimeout(r, 0));
      rows.set(id, box(i % 2 ? 'running' : 'exited'));
      asks[i]!.answer(box('paused'));
    }
    await done;
    expect(asks).toHaveLength(STALE_ASKS + 1);
    expect(rows.get(id)!.state).toBe('paused');
  });

  it('removes a row the engine no longer knows, and marks one Podman did not answer for', async () => {
    const { api, rows, asks } = heldRows(box('running'));
    const id = box('running').id;
    let done = inspectInto(api, id);
    asks[0]!.fail(new WardenError('E_TIMEOUT', 'Podman did not answer'));
    await done;
    expect(rows.get(id)!.unreachable?.code).toBe('E_TIMEOUT');
    done = inspectInto(api, id);
    asks[1]!.fail(new WardenError('E_NOT_FOUND', 'gone'));
    await done;
    expect(rows.has(id)).toBe(false);
  });
});
