// An `ask` rule on a destination: the connection waits while a person decides (the gateway's
// approvals, wired in open-warden.ts), then goes on or is refused like any other decision, the
// answer named in its rule text, so the 403 and the ledger say who decided.
import type { EgressPolicy } from '../../../shared/types/policy.js';
import { decideEgress, type EgressDecision, type FinalDecision, type Resolver } from './egress-decision.js';
import type { ConnectionRecord } from './connection-record.js';
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

export interface ConnectionContext {
  policy: EgressPolicy;
  ask: EgressAsker;
  resolve?: Resolver;
  sandboxId: string;
}

/** Policy, then a person for an `ask`, then the run's egress budget: what one connection gets. */
export async function decideConnection(
  ctx: ConnectionContext,
  conn: ConnectionRecord,
  via: EgressQuestion['via'],
  target: Target,
): Promise<FinalDecision> {
  const decided = await decideEgress(ctx.policy, target, ctx.resolve);
  const settled = await settleAsk(decided, ctx.ask, { sandboxId: ctx.sandboxId, connId: conn.connId, via, target });
  const spent = settled.action === 'allow' ? conn.budgetUsed() : null;
  return spent ? { action: 'deny', rule: spent, address: settled.address } : settled;
}
