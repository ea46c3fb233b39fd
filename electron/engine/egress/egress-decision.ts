// Decides one connection from the egress policy as it is now (a reload applies to the next
// connection of a running sandbox). Rules that match the name and port are weighed first, so a
// name no rule allows is denied before any lookup; then the address (a `resolve` pin, the literal,
// or one DNS answer, which is also the address connected to, so a second lookup cannot move it)
// narrows the rules with a cidr, and the guard refuses special addresses no cidr rule names.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ACTION_RANK, type EgressPolicy, type EgressRule, type PolicyAction } from '../../../shared/types/policy.js';
import { canonicalAddress, hostMatches, inCidr, specialKind, type Target } from './destination.js';

export interface EgressDecision {
  /** `ask`: a person decides (egress-ask.ts) before anything is connected. */
  action: 'allow' | 'deny' | 'ask';
  /** What decided, for the ledger and the 403: the rule, the default or the guard. */
  rule: string;
  /** Where it connects (allow) or what it would have (a guard's denial); null when denied before resolving. */
  address: string | null;
  /** A name that did not resolve: a failure (502), not a policy denial. */
  unresolved?: boolean;
}

/** After any ask is answered. */
export type FinalDecision = EgressDecision & { action: 'allow' | 'deny' };

export type Resolver = (host: string) => Promise<string>;

export const dnsResolver: Resolver = async (host) => (await lookup(host, { verbatim: true })).address;

interface Indexed {
  rule: EgressRule;
  index: number;
}

function describe({ rule, index }: Indexed): string {
  const parts = [
    rule.host !== undefined ? `host ${rule.host}` : null,
    rule.port ? `port ${rule.port.join(',')}` : null,
    rule.cidr !== undefined ? `cidr ${rule.cidr}` : null,
  ].filter(Boolean);
  return `egress.rules[${index}] (${parts.join(', ')}, ${rule.action})`;
}

function strictest(rules: Indexed[]): Indexed | null {
  let best: Indexed | null = null;
  for (const r of rules) if (!best || ACTION_RANK[r.rule.action] > ACTION_RANK[best.rule.action]) best = r;
  return best;
}

function settle(action: PolicyAction, rule: string, address: string | null): EgressDecision {
  return { action, rule, address };
}

/**
 * The `resolve` pin for a name. The name is the sandbox's choice, so only the policy's own keys
 * count: `constructor` or `__proto__` must not find Object.prototype's (which threw, and the
 * connection went unrecorded). Keys are matched case-insensitively, as hosts arrive lower-cased.
 */
function pinFor(policy: EgressPolicy, host: string): string | undefined {
  for (const [name, address] of Object.entries(policy.resolve)) if (name.toLowerCase().replace(/\.$/, '') === host) return address;
  return undefined;
}

export async function decideEgress(policy: EgressPolicy, target: Target, resolve: Resolver = dnsResolver): Promise<EgressDecision> {
  const byName = policy.rules
    .map((rule, index) => ({ rule, index }))
    .filter(
      ({ rule }) => (rule.host === undefined || hostMatches(rule.host, target.host)) && (!rule.port || rule.port.includes(target.port)),
    );
  const defaultRule = `no rule allows it; default ${policy.default}`;
  if (byName.length === 0 && policy.default === 'deny') return settle('deny', defaultRule, null);
  const nameOnly = strictest(byName.filter(({ rule }) => rule.cidr === undefined));
  if (nameOnly?.rule.action === 'deny') return settle('deny', describe(nameOnly), null);

  let found: string | null;
  const pinned = pinFor(policy, target.host);
  if (pinned) found = pinned;
  else if (isIP(target.host)) found = target.host;
  else {
    try {
      found = await resolve(target.host);
    } catch {
      found = null;
    }
  }
  // The address in its one spelling (destination.ts), which every check below and the ledger see.
  const address = found === null ? null : canonicalAddress(found);
  if (address === null) return { action: 'deny', rule: `${target.host} does not resolve`, address: null, unresolved: true };

  const applicable = byName.filter(({ rule }) => rule.cidr === undefined || inCidr(address, rule.cidr));
  const decided = strictest(applicable);
  const action = decided?.rule.action ?? policy.default;
  const rule = decided ? describe(decided) : defaultRule;
  if (action === 'deny') return settle('deny', rule, address);
  const kind = specialKind(address);
  if (kind) {
    const named = applicable.find(({ rule: r }) => r.cidr !== undefined && r.action !== 'deny' && inCidr(address, r.cidr));
    if (!named) return settle('deny', `guard: ${address} is ${kind} address, which only a rule with a cidr naming it may allow`, address);
  }
  return settle(action, rule, address);
}
