// The effect shown for an asked write, as text: the shapes a person can be shown and the ones the
// engine refuses to show as a diff (too long, binary, unreadable), and the precondition on the write.
import { describe, expect, it } from 'vitest';
import { EFFECT_MAX_LINES } from '../../../shared/types/approval-effect.js';
import { stillAsShown, writeEffect } from './write-effect.js';
import { pathAccess } from './path-policy.js';

const comps = ['a', 'b.txt'];

describe('writeEffect', () => {
  it('is a whole unified diff, or a summary with both digests when it cannot be one', () => {
    const same = writeEffect(comps, { bytes: Buffer.from('x\n') }, Buffer.from('x\n'));
    expect(same.kind).toBe('summary');
    expect(same.text).toContain('nothing changes');
    const long = Array.from({ length: EFFECT_MAX_LINES + 1 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const big = writeEffect(comps, { absent: true }, Buffer.from(long));
    expect(big.kind).toBe('summary');
    expect(big.text).toContain(`+${EFFECT_MAX_LINES + 1} −0 lines: too long to show whole`);
    const unreadable = writeEffect(comps, { unreadable: '/workspace/a/b.txt is a symlink' }, Buffer.from('y'));
    expect(unreadable.text).toContain('cannot be read (/workspace/a/b.txt is a symlink)');
    expect(unreadable.before).toBeNull();
    // Text with markup is only text: the diff carries it as characters.
    expect(writeEffect(comps, { absent: true }, Buffer.from('<b>x</b>\n')).text).toContain('+<b>x</b>\n');
  });

  it('lets the write go ahead only over the file that was shown', () => {
    const shown = writeEffect(comps, { bytes: Buffer.from('old\n') }, Buffer.from('new\n'));
    expect(() => stillAsShown(shown, { bytes: Buffer.from('old\n') })).not.toThrow();
    expect(() => stillAsShown(shown, { bytes: Buffer.from('other\n') })).toThrow(/changed after its diff was shown/);
    expect(() => stillAsShown(shown, { absent: true })).toThrow(/changed after/);
    const created = writeEffect(comps, { absent: true }, Buffer.from('new\n'));
    expect(() => stillAsShown(created, { absent: true })).not.toThrow();
    expect(() => stillAsShown(created, { bytes: Buffer.from('planted\n') })).toThrow(/changed after/);
  });
});

describe('path rule ask', () => {
  it('is weaker than read-only and hidden, stronger than none, and covers what is below it', () => {
    const rules = [
      { path: '/workspace/src', access: 'ask' as const },
      { path: '/workspace/src/locked', access: 'read-only' as const },
    ];
    expect(pathAccess(rules, '/workspace/src/x.py').access).toBe('ask');
    expect(pathAccess(rules, '/workspace/src/locked/y').access).toBe('read-only');
    expect(pathAccess([...rules].reverse(), '/workspace/src/locked/y').access).toBe('read-only');
    expect(pathAccess(rules, '/workspace/docs/z').access).toBe('read-write');
  });
});
