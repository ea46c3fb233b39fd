// What one poll of a watched tree reports: the difference between two looks, named by path.
import { describe, expect, it } from 'vitest';
import type { TreeEntry } from '../../engine/podman/file-tree.js';
import { watchEvents } from './envd-watch.js';

const e = (path: string, over: Partial<TreeEntry> = {}): TreeEntry => ({
  path,
  name: path.split('/').pop()!,
  type: 'file',
  size: 1,
  mode: 0o644,
  mtime: '2026-01-01T00:00:00.000Z',
  ...over,
});
const look = (...entries: TreeEntry[]) => new Map(entries.map((x) => [x.path, x]));
const kinds = (before: Map<string, TreeEntry>, after: Map<string, TreeEntry>) =>
  watchEvents(before, after).map((x) => `${x.type} ${x.name}`);

describe('watchEvents', () => {
  it('reports creates, writes, mode changes and removes in path order', () => {
    const before = look(e('a'), e('b'), e('c'), e('d', { type: 'dir' }));
    const after = look(e('a', { size: 2 }), e('b', { mode: 0o600 }), e('d', { type: 'dir', mtime: 'later' }), e('d/n'));
    expect(kinds(before, after)).toEqual(['EVENT_TYPE_WRITE a', 'EVENT_TYPE_CHMOD b', 'EVENT_TYPE_REMOVE c', 'EVENT_TYPE_CREATE d/n']);
  });

  it('a name whose type changed is a remove and a create; nothing changed is nothing', () => {
    expect(kinds(look(e('x')), look(e('x', { type: 'dir' })))).toEqual(['EVENT_TYPE_REMOVE x', 'EVENT_TYPE_CREATE x']);
    expect(kinds(look(e('x')), look(e('x')))).toEqual([]);
  });
});
