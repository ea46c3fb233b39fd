// Unified hunks are real patches: GNU patch, given each one, turns the old text into the new, for
// edits at the ends, far apart (two hunks), a missing final newline on either side, and empty sides.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asText, unifiedHunks } from './line-diff.js';

const lines = (n: number, f: (i: number) => string = (i) => `line ${i}`) => Array.from({ length: n }, (_, i) => `${f(i)}\n`).join('');

const CASES: Array<[string, string, string]> = [
  ['one changed line', 'a\nb\nc\n', 'a\nB\nc\n'],
  ['two hunks far apart', lines(40), lines(40, (i) => (i === 2 || i === 35 ? `changed ${i}` : `line ${i}`))],
  ['added at the end without a newline', 'a\nb\n', 'a\nb\nc'],
  ['newline only added', 'a\nb', 'a\nb\n'],
  ['from empty', '', 'x\ny\n'],
  ['to empty', 'x\ny\n', ''],
  ['inserted and removed blocks', lines(12), lines(12).replace('line 3\n', '').replace('line 8\n', 'line 8\nnew 1\nnew 2\n')],
];

describe('unifiedHunks', () => {
  it.each(CASES)('%s: patch applies it', (_name, before, after) => {
    const d = unifiedHunks(before, after)!;
    const dir = mkdtempSync(join(tmpdir(), 'warden-hunks-'));
    try {
      writeFileSync(join(dir, 'f'), before);
      writeFileSync(join(dir, 'p'), `--- a/f\n+++ b/f\n${d.hunks}`);
      const r = spawnSync('patch', ['-p1', '-i', 'p'], { cwd: dir, encoding: 'utf8' });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(readFileSync(join(dir, 'f'), 'utf8')).toBe(after);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts lines, groups near changes into one hunk and far ones into two', () => {
    expect(unifiedHunks('a\nb\nc\n', 'a\nB\nc\n')).toEqual({ hunks: '@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n', added: 1, removed: 1 });
    const far = unifiedHunks(CASES[1]![1], CASES[1]![2])!;
    expect(far.hunks.match(/^@@/gm)).toHaveLength(2);
    expect(unifiedHunks('same\n', 'same\n')).toEqual({ hunks: '', added: 0, removed: 0 });
  });

  it('tells text from binary', () => {
    expect(asText(Buffer.from('héllo\n'))).toBe('héllo\n');
    expect(asText(Buffer.from([0x61, 0x00, 0x62]))).toBeNull();
    expect(asText(Buffer.from([0xff, 0xfe, 0x41]))).toBeNull();
  });
});
