// An `ask` rule on a destination: the connection waits while a person decides (the gateway's
// approvals, wired in open-warden.ts), then goes on or is refused like any other decision, the
// answer named in its rule text, so the 403 and the ledger say who decided.
import type { EgressDecision, FinalDecision } from './egress-decision.js';
import type { Target } from './destination.js';

export interface EgressQuestion {
  sandboxId: string;
  /** Pairs the approval with the connection's net.connect. */
  connId: string;
  via: 'connect' | 'http';
  target: Target;
  address: string | null;
  /** The rule that asks. */
  rule: string;
}

export type EgressAsker = (question: EgressQuestion) => Promise<{ approved: boolean; why: string }>;

/** The decision with any `ask` answered. */
export async function settleAsk(
  decision: EgressDecision,
  ask: EgressAsker,
  question: Omit<EgressQuestion, 'address' | 'rule'>,
): Promise<FinalDecision> {
  if (decision.action !== 'ask') return { ...decision, action: decision.action };
  const answer = await ask({ ...question, address: decision.address, rule: decision.rule }).catch((err: Error) => ({
    approved: false,
    why: `asking failed: ${err.message}`,
  }));
  return { action: answer.approved ? 'allow' : 'deny', rule: `${decision.rule}; ${answer.why}`, address: decision.address };
}
