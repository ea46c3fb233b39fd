// Paths for the file API, checked on the host before anything runs: a path is made of plain
// components under /workspace, or it is refused. This is only the first wall; the helper in the
// sandbox then opens each component with O_NOFOLLOW relative to its parent (file-helper.ts), so a
// symlink or a directory swapped for one between check and use is never followed.
import { WardenError } from '../../../shared/errors.js';
import type { PathRule } from '../../../shared/types/policy.js';
import type { AgentContext, PolicyVerdict } from './call-runner.js';
import { GatewayDenial } from './denial.js';
import { globToRegExp } from './glob.js';
import type { EffectivePolicy } from './policy-load.js';

export const WORKSPACE = '/workspace';
const MAX_COMPONENT_BYTES = 255;

/** The components of a workspace path (empty for /workspace itself). */
export function workspaceComponents(input: string): string[] {
  if (input.includes('\0')) throw new WardenError('E_BAD_INPUT', 'path contains a NUL byte');
  let rest: string;
  if (input.startsWith('/')) {
    const parts = input.split('/').filter((p) => p !== '' && p !== '.');
    if (parts[0] !== 'workspace') {
      throw new WardenError('E_POLICY_DENIED', `path ${JSON.stringify(input)} is outside ${WORKSPACE}`, 'file access is confined to /workspace: give a path relative to it or under it');
    }
    rest = parts.slice(1).join('/');
  } else rest = input;
  const comps = rest.split('/').filter((p) => p !== '' && p !== '.');
  for (const c of comps) {
    if (c === '..') throw new WardenError('E_POLICY_DENIED', `path ${JSON.stringify(input)} has a ".." component`, 'give a path inside /workspace without ".."');
    if (Buffer.byteLength(c) > MAX_COMPONENT_BYTES) throw new WardenError('E_BAD_INPUT', `a component of ${JSON.stringify(input)} is longer than ${MAX_COMPONENT_BYTES} bytes`);
  }
  return comps;
}

export function workspacePath(comps: string[]): string {
  return comps.length ? `${WORKSPACE}/${comps.join('/')}` : WORKSPACE;
}

export type PathAccess = 'read-write' | 'read-only' | 'hidden';

/** The access of a path under the rules: hidden if it or any parent is hidden; read-only likewise. */
export function pathAccess(rules: PathRule[], path: string): { access: PathAccess; rule: string | null } {
  let found: { access: PathAccess; rule: string | null } = { access: 'read-write', rule: null };
  const prefixes: string[] = [];
  const parts = path.split('/').filter(Boolean);
  for (let i = 1; i <= parts.length; i++) prefixes.push(`/${parts.slice(0, i).join('/')}`);
  for (const rule of rules) {
    const re = globToRegExp(rule.path, true);
    if (!prefixes.some((p) => re.test(p))) continue;
    if (rule.access === 'hidden') return { access: 'hidden', rule: rule.path };
    if (rule.access === 'read-only') found = { access: 'read-only', rule: rule.path };
  }
  return found;
}

/** The decision on a file API call: path rules bind agents; the user is not bound by them. */
export function fileVerdict(ctx: AgentContext, policy: EffectivePolicy, path: string, write: boolean, op: string): PolicyVerdict {
  if (ctx.trusted) return { action: 'allow', source: 'user', reason: `${op} ${path}`, scope: `${op}:${path}`, summary: `${op} ${path}` };
  const access = pathAccess(policy.paths, path);
  if (access.access === 'hidden') throw new GatewayDenial('path', `${path} is hidden from agents by policy (${access.rule})`);
  if (write && access.access === 'read-only') throw new GatewayDenial('path', `${path} is read-only for agents by policy (${access.rule})`);
  return { action: 'allow', source: access.rule ?? 'paths', reason: `${op} ${path}`, scope: `${op}:${path}`, summary: `${op} ${path}` };
}
