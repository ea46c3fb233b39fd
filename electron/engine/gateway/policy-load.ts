// Loads the policy: WARDEN_HOME/policy.yaml (or .yml, .json) if present, else the commented default
// shipped in resources/. Invalid files are refused with the field that is wrong, never half-used.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { WardenError } from '../../../shared/errors.js';
import { PolicySchema, type Policy, type PolicyOverride } from '../../../shared/types/policy.js';
import { globToRegExp } from './glob.js';
import { applyOverride, applyTightening, type EffectivePolicy } from './policy-override.js';

export type { EffectivePolicy };
import { parseWith } from '../../../shared/contracts/parse.js';

export const POLICY_FILES = ['policy.yaml', 'policy.yml', 'policy.json'];

/** resources/policy.default.yaml, found from this module in the source tree or the bundled CLI. */
export function defaultPolicyPath(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'resources', 'policy.default.yaml');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return null;
}

export function parsePolicy(text: string, source: string): Policy {
  let raw: unknown;
  try {
    raw = source.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new WardenError(
      'E_BAD_INPUT',
      `policy ${source} is not valid ${source.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message}`,
    );
  }
  return parseWith(PolicySchema, raw, `policy ${source}`, 'compare with resources/policy.default.yaml');
}

export function loadPolicy(home: string): { policy: Policy; source: string } {
  for (const name of POLICY_FILES) {
    const path = join(home, name);
    if (existsSync(path)) return { policy: parsePolicy(readFileSync(path, 'utf8'), path), source: path };
  }
  const path = defaultPolicyPath();
  if (!path) throw new WardenError('E_INTERNAL', 'the default policy (resources/policy.default.yaml) is missing from this install');
  return { policy: parsePolicy(readFileSync(path, 'utf8'), path), source: path };
}

/**
 * For a sandbox an agent created (or one not yet known), overrides only tighten; for one the user
 * created they apply in full (policy-override.ts says why).
 */
export function effectivePolicy(policy: Policy, sandboxName: string | null, createdBy: 'user' | 'agent' = 'agent'): EffectivePolicy {
  let eff: EffectivePolicy = { commands: policy.commands, paths: policy.paths, budgets: policy.budgets, approvals: policy.approvals };
  if (!sandboxName || !policy.sandboxes) return eff;
  for (const [glob, o] of Object.entries(policy.sandboxes) as Array<[string, PolicyOverride]>) {
    if (!globToRegExp(glob, false).test(sandboxName)) continue;
    eff = createdBy === 'user' ? applyOverride(eff, o) : applyTightening(eff, o);
  }
  return eff;
}
