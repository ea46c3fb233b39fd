// Questions about egress put before a person, shared and bounded per sandbox. Connections that ask
// the same thing at once (same sandbox, run, kind, host and port: a package manager opening ten
// connections to one index) wait on one approval, and all get its answer. A sandbox may have at most
// MAX_PENDING_ASKS distinct questions waiting; past that a connection is denied without asking, so a
// loop of asked connections (to names an `ask` glob matches, say) cannot bury the approvals strip.
import type { EgressAsker, EgressQuestion } from './egress-ask.js';

/** Distinct questions one sandbox may have waiting for a person at once. */
export const MAX_PENDING_ASKS = 8;

type Answer = Awaited<ReturnType<EgressAsker>>;

/** `runOf`: the run a connection from this sandbox would be filed under now (part of what is asked). */
export function sharedAsker(ask: EgressAsker, runOf: (sandboxId: string) => string | null, max = MAX_PENDING_ASKS): EgressAsker {
  const waiting = new Map<string, Promise<Answer>>();
  const perSandbox = new Map<string, number>();
  return (q: EgressQuestion) => {
    const key = JSON.stringify([q.sandboxId, runOf(q.sandboxId), q.via, q.target.host, q.target.port, q.address, q.rule]);
    const same = waiting.get(key);
    if (same) return same;
    const open = perSandbox.get(q.sandboxId) ?? 0;
    if (open >= max)
      return Promise.resolve({
        approved: false,
        why: `${max} questions from this sandbox are already waiting for a person; denied without asking (answer those first)`,
      });
    perSandbox.set(q.sandboxId, open + 1);
    const answer = ask(q).finally(() => {
      waiting.delete(key);
      const left = (perSandbox.get(q.sandboxId) ?? 1) - 1;
      if (left > 0) perSandbox.set(q.sandboxId, left);
      else perSandbox.delete(q.sandboxId);
    });
    waiting.set(key, answer);
    return answer;
  };
}
