// Per-sandbox overrides are keyed by a sandbox-name glob, and an agent names the sandboxes it
// creates: so an override may loosen the policy only for sandboxes the user created. On a sandbox an
// agent created, only what tightens applies: a stricter default, rules that cannot make any program
// less strict, every path rule, smaller budgets, a shorter approval wait. Naming a sandbox `ci-*`
// then gains an agent nothing.
import { ACTION_RANK, RULE_RANK, type Budgets, type Policy, type PolicyAction, type PolicyOverride } from '../../../shared/types/policy.js';

/** The policy for one sandbox: overrides whose name glob matches, in file order, on top of the base. */
export interface EffectivePolicy {
  commands: Policy['commands'];
  paths: Policy['paths'];
  budgets: Budgets;
  approvals: Policy['approvals'];
}

const stricter = (a: PolicyAction, b: PolicyAction): PolicyAction => (ACTION_RANK[a] >= ACTION_RANK[b] ? a : b);

/** The override applied in full: for sandboxes the user created. */
export function applyOverride(eff: EffectivePolicy, o: PolicyOverride): EffectivePolicy {
  const out = { ...eff };
  if (o.commands) {
    out.commands = {
      default: o.commands.default ?? eff.commands.default,
      dynamic: o.commands.dynamic ?? eff.commands.dynamic,
      rules: [...(o.commands.rules ?? []), ...eff.commands.rules],
    };
  }
  if (o.paths) out.paths = [...o.paths, ...eff.paths];
  if (o.budgets) out.budgets = { ...eff.budgets, ...o.budgets } as Budgets;
  if (o.approvals) out.approvals = o.approvals;
  return out;
}

/**
 * Only what tightens: a rule is kept when its action is at least the default's, since the strictest
 * match wins and the default applies only where no rule matches, such a rule never makes a program
 * less strict than without it.
 */
export function applyTightening(eff: EffectivePolicy, o: PolicyOverride): EffectivePolicy {
  const out = { ...eff };
  if (o.commands) {
    const def = stricter(o.commands.default ?? eff.commands.default, eff.commands.default);
    out.commands = {
      default: def,
      dynamic: stricter(o.commands.dynamic ?? eff.commands.dynamic, eff.commands.dynamic),
      rules: [...(o.commands.rules ?? []).filter((r) => RULE_RANK[r.action] >= ACTION_RANK[def]), ...eff.commands.rules],
    };
  }
  if (o.paths) out.paths = [...o.paths, ...eff.paths];
  if (o.budgets) {
    const b = o.budgets;
    const min = (k: 'wallTimeMs' | 'maxCalls' | 'execTimeoutMs' | 'maxExecTimeoutMs' | 'outputBytes') =>
      Math.min(b[k] ?? eff.budgets[k], eff.budgets[k]);
    out.budgets = {
      wallTimeMs: min('wallTimeMs'),
      maxCalls: min('maxCalls'),
      execTimeoutMs: min('execTimeoutMs'),
      maxExecTimeoutMs: min('maxExecTimeoutMs'),
      outputBytes: min('outputBytes'),
      breaker: {
        failures: Math.min(b.breaker?.failures ?? eff.budgets.breaker.failures, eff.budgets.breaker.failures),
        cooldownMs: Math.max(b.breaker?.cooldownMs ?? eff.budgets.breaker.cooldownMs, eff.budgets.breaker.cooldownMs),
      },
    };
  }
  if (o.approvals) out.approvals = { timeoutMs: Math.min(o.approvals.timeoutMs, eff.approvals.timeoutMs) };
  return out;
}
