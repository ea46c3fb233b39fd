// Times from the environment: the default when unset, the value when sound, a clear refusal otherwise.
import { describe, expect, it } from 'vitest';
import { msFromEnv } from './env-ms.js';

describe('msFromEnv', () => {
  it('gives the default when unset or empty, and a whole positive number as it is', () => {
    expect(msFromEnv({}, 'X_MS', 60_000)).toBe(60_000);
    expect(msFromEnv({ X_MS: ' ' }, 'X_MS', 60_000)).toBe(60_000);
    expect(msFromEnv({ X_MS: '8000' }, 'X_MS', 60_000)).toBe(8000);
  });

  it.each(['abc', '0', '-5', '1.5', '60s'])('refuses %j, naming the variable and the way out', (value) => {
    expect(() => msFromEnv({ X_MS: value }, 'X_MS', 60_000)).toThrow(
      expect.objectContaining({ code: 'E_BAD_INPUT', message: `X_MS must be a whole number of milliseconds above 0, not "${value}"` }),
    );
  });
});
