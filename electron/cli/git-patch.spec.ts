// The patch `warden run export` writes, for the cases the integration spec does not reach: files a
// text patch cannot carry are named in the header, never dropped; modes git does not track are left
// out; an empty file added or removed is headers only, as git writes it.
import { describe, expect, it } from 'vitest';
import type { WorkspaceDiff, WorkspaceFileChange, WorkspaceFileState } from '../../shared/types/diff.js';
import { gitPatch } from './git-patch.js';

const state = (mode: number, sha256: string, size = 1): WorkspaceFileState => ({ type: 'file', size, mode, sha256 });

function diffOf(files: WorkspaceFileChange[]): WorkspaceDiff {
  return {
    sandboxId: 'box',
    base: { kind: 'run', id: 'run_x', takenAt: 'T' },
    files,
    totals: { added: 0, modified: 0, deleted: 0 },
    truncated: false,
  };
}

const change = (path: string, over: Partial<WorkspaceFileChange>): WorkspaceFileChange => ({
  path,
  change: 'modified',
  before: state(0o644, 'a'),
  after: state(0o644, 'a'),
  diff: null,
  summary: '',
  linesAdded: 0,
  linesRemoved: 0,
  ...over,
});

describe('gitPatch', () => {
  it('lists what it cannot carry and writes git headers for the rest', () => {
    const p = gitPatch(
      diffOf([
        change('bin', { change: 'added', before: null, after: state(0o644, 'b', 9), summary: 'binary, 0 → 9 bytes' }),
        change('quiet', { after: state(0o600, 'a'), summary: 'mode 644 → 600' }),
        change('say "hi"', { change: 'added', before: null, diff: '--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n' }),
        change('link', {
          before: { ...state(0o777, 'l'), type: 'symlink' },
          after: { ...state(0o777, 'm'), type: 'symlink' },
          summary: 'symlink target, +1 −1',
        }),
        change('gone', { change: 'deleted', after: null, before: state(0o755, 'e', 0), diff: '--- a/gone\n+++ /dev/null\n' }),
        change('tool', { after: state(0o755, 'a'), summary: 'mode 644 → 755' }),
      ]),
      'run run_x',
    );
    expect(p.included).toEqual(['gone', 'tool']);
    expect(p.left.map((l) => l.path)).toEqual(['bin', 'quiet', 'say "hi"', 'link']);
    expect(p.text).toContain('#   added "bin" (binary, 0 → 9 bytes; its bytes were not fetched)\n');
    expect(p.text).toContain('#   added "say \\"hi\\"" (path git would have to quote)\n');
    expect(p.text.split('\n\n')[1]).toBe(
      'diff --git a/gone b/gone\ndeleted file mode 100755\ndiff --git a/tool b/tool\nold mode 100644\nnew mode 100755\n',
    );
    expect(p.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
