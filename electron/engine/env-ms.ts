// A time in milliseconds read from the environment (WARDEN_STOP_BOUND_MS, WARDEN_PODMAN_LIST_BOUND_MS):
// unset or empty gives the default; anything else must be a whole number above 0, or Warden refuses
// to start and says so, rather than quietly running with a bound the person did not ask for.
import { WardenError } from '../../shared/errors.js';

export function msFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const ms = Number(text);
  if (Number.isInteger(ms) && ms > 0) return ms;
  throw new WardenError(
    'E_BAD_INPUT',
    `${name} must be a whole number of milliseconds above 0, not "${text.slice(0, 40)}"`,
    `unset it for the default (${fallback}), or set it to e.g. ${fallback}`,
  );
}
