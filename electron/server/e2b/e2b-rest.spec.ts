// What an E2B create becomes in Warden, and what it is refused for, before anything reaches the gateway.
import { describe, expect, it } from 'vitest';
import type { WardenError } from '../../../shared/errors.js';
import { E2bNewSandboxSchema } from '../../../shared/types/e2b.js';
import { createSpec } from './e2b-rest.js';

const IMAGE = 'localhost/warden-sandbox:1';
const spec = (body: Record<string, unknown>) => createSpec(E2bNewSandboxSchema.parse({ templateID: 'base', ...body }), IMAGE);
const refusal = (body: Record<string, unknown>): string => {
  try {
    spec(body);
  } catch (err) {
    return (err as WardenError).message;
  }
  return 'accepted';
};

describe('createSpec', () => {
  it('maps metadata to labels, envs to env and timeout to the TTL (300 s when none)', () => {
    expect(spec({ metadata: { team: 'a' }, envVars: { A: '1' }, timeout: 60 })).toEqual({
      labels: { team: 'a', 'e2b.template': 'base' },
      env: { A: '1' },
      ttlSeconds: 60,
    });
    expect(spec({})).toEqual({ labels: { 'e2b.template': 'base' }, ttlSeconds: 300 });
  });

  it('names the known templates for an unknown one, and refuses what Warden cannot do', () => {
    expect(refusal({ templateID: 'code-interpreter-v1' })).toContain('template "code-interpreter-v1" is not known to Warden');
    expect(refusal({ metadata: { 'warden.agent': 'someone' } })).toContain('reserved');
    for (const body of [
      { mcp: { x: {} } },
      { volumeMounts: [{ name: 'v', path: '/v' }] },
      { autoPause: true },
      { allow_internet_access: true },
    ])
      expect(refusal(body)).toContain('not supported by Warden');
  });
});
