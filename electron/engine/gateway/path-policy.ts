// Which workspace paths an agent may read, write or see: the policy's path rules (hidden, read-only,
// ask) applied to a path already checked for shape (podman/workspace-path.ts); the user is not bound.
import type { PathRule } from '../../../shared/types/policy.js';
import type { AgentContext, PolicyVerdict } from './call-spec.js';
import { GatewayDenial } from './denial.js';
import { globToRegExp } from './glob.js';
import type { EffectivePolicy } from './policy-load.js';

export type PathAccess = 'read-write' | 'ask' | 'read-only' | 'hidden';

/** The strictest rule wins: hidden, then read-only, then ask. */
const RANK: Record<PathAccess, number> = { 'read-write': 0, ask: 1, 'read-only': 2, hidden: 3 };

/** The access of a path under the rules: hidden if it or any parent is hidden; read-only, then ask, likewise. */
export function pathAccess(rules: PathRule[], path: string): { access: PathAccess; rule: string | null } {
  let found: { access: PathAccess; rule: string | null } = { access: 'read-write', rule: null };
  const prefixes: string[] = [];
  const parts = path.split('/').filter(Boolean);
  for (let i = 1; i <= parts.length; i++) prefixes.push(`/${parts.slice(0, i).join('/')}`);
  for (const rule of rules) {
    const re = globToRegExp(rule.path, true);
    if (!prefixes.some((p) => re.test(p))) continue;
    if (rule.access === 'hidden') return { access: 'hidden', rule: rule.path };
    if (RANK[rule.access] > RANK[found.access]) found = { access: rule.access, rule: rule.path };
  }
  return found;
}

/** The decision on a file API call: path rules bind agents; the user is not bound by them. */
export function fileVerdict(ctx: AgentContext, policy: EffectivePolicy, path: string, write: boolean, op: string): PolicyVerdict {
  if (ctx.trusted) return { action: 'allow', source: 'user', reason: `${op} ${path}`, scope: `${op}:${path}`, summary: `${op} ${path}` };
  const access = pathAccess(policy.paths, path);
  if (access.access === 'hidden') throw new GatewayDenial('path', `${path} is hidden from agents by policy (${access.rule})`);
  if (write && access.access === 'read-only') throw new GatewayDenial('path', `${path} is read-only for agents by policy (${access.rule})`);
  if (write && access.access === 'ask')
    return {
      action: 'ask',
      source: access.rule!,
      reason: `agents' changes to ${access.rule} wait for a person (path rule)`,
      scope: `${op}:${path}`,
      summary: `${op} ${path}`,
    };
  return { action: 'allow', source: access.rule ?? 'paths', reason: `${op} ${path}`, scope: `${op}:${path}`, summary: `${op} ${path}` };
}
