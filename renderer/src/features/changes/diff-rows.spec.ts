// Side-by-side layout of a unified diff: numbering, pairing of changed runs, new files, notes.
import { describe, expect, it } from 'vitest';
import { sideBySideRows } from './diff-rows.js';

describe('sideBySideRows', () => {
  it('pairs a removed run with the added run after it and keeps both sides numbered', () => {
    const rows = sideBySideRows('--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@\n keep\n-old\n+new\n+more\n end\n');
    expect(rows).toEqual([
      { kind: 'hunk', text: '@@ -1,3 +1,4 @@' },
      { kind: 'line', left: { no: 1, text: 'keep', mark: ' ' }, right: { no: 1, text: 'keep', mark: ' ' } },
      { kind: 'line', left: { no: 2, text: 'old', mark: '-' }, right: { no: 2, text: 'new', mark: '+' } },
      { kind: 'line', left: null, right: { no: 3, text: 'more', mark: '+' } },
      { kind: 'line', left: { no: 3, text: 'end', mark: ' ' }, right: { no: 4, text: 'end', mark: ' ' } },
    ]);
  });

  it('shows a new file on the right only, and passes notes and markup through as text', () => {
    const rows = sideBySideRows('--- /dev/null\n+++ b/p.html\n@@ -0,0 +1 @@\n+<b>x</b>\n\\ No newline at end of file\n');
    expect(rows[1]).toEqual({ kind: 'line', left: null, right: { no: 1, text: '<b>x</b>', mark: '+' } });
    expect(rows[2]).toEqual({ kind: 'note', text: '\\ No newline at end of file' });
  });
});
