// The review methods' inputs are checked at the UI door, before anything reaches the gateway: tags
// and names as the engine takes them, no unknown fields, a sandbox ref always given.
import { describe, expect, it } from 'vitest';
import { parseUiRequest } from './ui-session.js';

const bad = (method: string, params: unknown) => {
  try {
    parseUiRequest(method, params);
  } catch (err) {
    return (err as { code: string }).code;
  }
  return 'accepted';
};

describe('review requests', () => {
  it('refuses tags and names the engine would refuse, extra fields and a missing ref', () => {
    expect(bad('snapshot.take', { ref: 'box', tag: '../x' })).toBe('E_BAD_INPUT');
    expect(bad('snapshot.take', { ref: 'box', tag: 'a'.repeat(65) })).toBe('E_BAD_INPUT');
    expect(bad('snapshot.reset', { ref: 'box', to: 'a b' })).toBe('E_BAD_INPUT');
    expect(bad('snapshot.fork', { ref: 'box', from: 'ok', name: '-dash' })).toBe('E_BAD_INPUT');
    expect(bad('snapshot.fork', { ref: 'box', from: 'ok', name: 'fine', labels: { a: 'b' } })).toBe('E_BAD_INPUT');
    expect(bad('snapshot.remove', { tag: 'ok' })).toBe('E_BAD_INPUT');
    expect(bad('sandbox.diff', { ref: '' })).toBe('E_BAD_INPUT');
  });

  it('takes what is well formed', () => {
    expect(bad('snapshot.take', { ref: 'box' })).toBe('accepted');
    expect(bad('snapshot.take', { ref: 'box', tag: 'before-1.2_x' })).toBe('accepted');
    expect(bad('snapshot.fork', { ref: 'box', from: 'before', name: 'box-fork' })).toBe('accepted');
    expect(parseUiRequest('snapshot.reset', { ref: 'box', to: 'before' })).toEqual({
      method: 'snapshot.reset',
      params: { ref: 'box', to: 'before' },
    });
  });
});
