// The pool's config: WARDEN_HOME/pool.yaml (or .yml, .json) if present, else the defaults in
// shared/types/pool.ts (two of the default sandbox, 2 GiB of memory limits at most). Apart from
// policy.yaml on purpose: the policy says what agents may do; this says what the engine keeps
// running for speed. An invalid file is refused with the field that is wrong, never half-used.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { WardenError } from '../../../shared/errors.js';
import { parseWith } from '../../../shared/contracts/parse.js';
import { PoolConfigSchema, type PoolConfig } from '../../../shared/types/pool.js';

export const POOL_FILES = ['pool.yaml', 'pool.yml', 'pool.json'];

export function parsePoolConfig(text: string, source: string): PoolConfig {
  let raw: unknown;
  try {
    raw = source.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new WardenError('E_BAD_INPUT', `pool config ${source} is not valid: ${(err as Error).message}`);
  }
  return parseWith(PoolConfigSchema, raw ?? {}, `pool config ${source}`, 'see "Warm pool" in README.md');
}

export function loadPoolConfig(home: string): { config: PoolConfig; source: string } {
  for (const name of POOL_FILES) {
    const path = join(home, name);
    if (existsSync(path)) return { config: parsePoolConfig(readFileSync(path, 'utf8'), path), source: path };
  }
  return { config: PoolConfigSchema.parse({}), source: 'defaults' };
}
