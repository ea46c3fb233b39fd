// Shared and bounded egress questions: the asker underneath is this spec's own (each question held
// until the spec answers it), so which connections share an approval and which are refused is exact.
import { describe, expect, it } from 'vitest';
import type { EgressQuestion } from './egress-ask.js';
import { MAX_PENDING_ASKS, sharedAsker } from './ask-queue.js';

function heldAsker() {
  const asked: Array<{ q: EgressQuestion; answer: (approved: boolean) => void }> = [];
  const ask = (q: EgressQuestion) =>
    new Promise<{ approved: boolean; why: string }>((resolve) =>
      asked.push({ q, answer: (approved) => resolve({ approved, why: approved ? 'approved by tester' : 'denied by tester' }) }),
    );
  return { asked, ask };
}

const question = (over: Partial<EgressQuestion> & { host?: string; port?: number } = {}): EgressQuestion => ({
  sandboxId: over.sandboxId ?? 'sb1',
  connId: over.connId ?? 'c1',
  via: over.via ?? 'connect',
  target: { host: over.host ?? 'pypi.org', port: over.port ?? 443 } as EgressQuestion['target'],
  address: over.address ?? '151.101.0.223',
  rule: over.rule ?? 'egress.rules[0] (host pypi.org, ask)',
});

describe('egress questions, shared and bounded per sandbox', () => {
  it('puts connections that ask the same thing at once before a person once, and gives all of them the answer', async () => {
    const { asked, ask } = heldAsker();
    const shared = sharedAsker(ask, () => 'run-1');
    const answers = [1, 2, 3].map((i) => shared(question({ connId: `c${i}` })));
    expect(asked).toHaveLength(1);
    asked[0]!.answer(true);
    expect(await Promise.all(answers)).toEqual([1, 2, 3].map(() => ({ approved: true, why: 'approved by tester' })));
    // Answered, the next connection asks again (an answer is not a standing rule).
    void shared(question({ connId: 'c4' }));
    expect(asked).toHaveLength(2);
  });

  it('asks apart what differs: the port, the sandbox, the run', () => {
    const { asked, ask } = heldAsker();
    let run = 'run-1';
    const shared = sharedAsker(ask, () => run);
    void shared(question());
    void shared(question({ port: 8443 }));
    void shared(question({ sandboxId: 'sb2' }));
    run = 'run-2';
    void shared(question());
    expect(asked.map((a) => [a.q.sandboxId, a.q.target.port])).toEqual([
      ['sb1', 443],
      ['sb1', 8443],
      ['sb2', 443],
      ['sb1', 443],
    ]);
  });

  it(`denies without asking past ${MAX_PENDING_ASKS} distinct questions waiting from one sandbox, and asks again once one is answered`, async () => {
    const { asked, ask } = heldAsker();
    const shared = sharedAsker(ask, () => null);
    for (let port = 1; port <= MAX_PENDING_ASKS; port++) void shared(question({ port }));
    expect(await shared(question({ port: 999 }))).toEqual({
      approved: false,
      why: `${MAX_PENDING_ASKS} questions from this sandbox are already waiting for a person; denied without asking (answer those first)`,
    });
    // Another sandbox is not held back by this one.
    void shared(question({ sandboxId: 'sb2', port: 999 }));
    expect(asked).toHaveLength(MAX_PENDING_ASKS + 1);
    asked[0]!.answer(false);
    await new Promise((r) => setImmediate(r));
    void shared(question({ port: 999 }));
    expect(asked).toHaveLength(MAX_PENDING_ASKS + 2);
  });
});
