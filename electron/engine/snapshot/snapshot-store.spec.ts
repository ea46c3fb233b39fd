// The pure parts of snapshots: the spec a reset recreates from a sandbox's info, the default tag, the
// store's folders (a tag is never overwritten), and the committed layer's ids given back (as root only).
import { chmodSync, chownSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { SnapshotStore, specOf, type SnapshotManifest } from './snapshot-store.js';
import { defaultTag } from './snapshots.js';
import { unshiftLayerIds } from './layer-ids.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'warden-snapstore-'));
  dirs.push(d);
  return d;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const info = (over: Partial<SandboxInfo> = {}): SandboxInfo => ({
  id: 'a'.repeat(64),
  name: 'box',
  image: 'localhost/warden-sandbox:1',
  state: 'running',
  runtime: 'runc',
  network: 'none',
  workspace: null,
  limits: {
    memoryBytes: 256 * 2 ** 20,
    cpus: 0.5,
    pids: 64,
    readOnlyRoot: false,
    tmpSizeBytes: null,
    diskBytes: 2 ** 30,
    diskEnforced: true,
  },
  createdAt: '2026-01-01T00:00:00.000Z',
  startedAt: null,
  expiresAt: null,
  labels: {},
  exitCode: null,
  oomKilled: false,
  exitReason: null,
  ...over,
});

describe('specOf', () => {
  it('keeps what the sandbox was made with, and the TTL that is left', () => {
    const now = Date.parse('2026-01-01T00:00:00.000Z');
    const spec = specOf(info({ workspace: '/srv/ws', labels: { team: 'a' }, expiresAt: '2026-01-01T00:01:00.500Z' }), now);
    expect(spec).toEqual({
      memory: 256 * 2 ** 20,
      cpus: 0.5,
      pids: 64,
      network: 'none',
      runtime: 'runc',
      workspace: '/srv/ws',
      labels: { team: 'a' },
      ttlSeconds: 61,
      readOnlyRoot: false,
      disk: 2 ** 30,
    });
  });

  it('leaves out a runtime it does not know and sizes that were never set', () => {
    const spec = specOf(
      info({ runtime: 'unknown', limits: { ...info().limits, diskBytes: null, readOnlyRoot: true, tmpSizeBytes: 2 ** 20 } }),
    );
    expect(spec.runtime).toBeUndefined();
    expect(spec.disk).toBeUndefined();
    expect(spec.tmpSize).toBe(2 ** 20);
  });
});

describe('defaultTag', () => {
  it('is the time to the second, a valid tag', () => {
    expect(defaultTag(new Date('2026-11-26T03:17:42.123Z'))).toBe('s-20261126T031742Z');
  });
});

describe('SnapshotStore', () => {
  const manifest = (tag: string, createdAt: string): SnapshotManifest => ({
    sandbox: 'box',
    sandboxId: 'a'.repeat(64),
    tag,
    createdAt,
    image: `localhost/warden-snapshot/aaaaaaaaaaaa:${tag}`,
    imageId: 'b'.repeat(64),
    rootBytes: 1,
    workspaceSha256: 'c'.repeat(64),
    workspaceBytes: 2,
    takenBy: 'user',
    spec: {},
  });

  it('never overwrites a tag, lists finished snapshots oldest first, and forgets an abandoned one', () => {
    const store = new SnapshotStore(tempDir());
    store.begin('box', 'late');
    store.finish(manifest('late', '2026-01-02T00:00:00.000Z'));
    store.begin('box', 'early');
    store.finish(manifest('early', '2026-01-01T00:00:00.000Z'));
    store.begin('box', 'unfinished');
    expect(() => store.begin('box', 'late')).toThrow(expect.objectContaining({ code: 'E_CONFLICT' }));
    expect(store.list('box').map((m) => m.tag)).toEqual(['early', 'late']);
    store.abandon('box', 'late');
    expect(store.list('box').map((m) => m.tag)).toEqual(['early']);
    expect(() => store.get('box', 'late')).toThrow(expect.objectContaining({ code: 'E_NOT_FOUND' }));
    expect(store.list('other')).toEqual([]);
    expect(() => store.begin('..', 'x')).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT' }));
    expect(() => store.get('box', '../x')).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT' }));
  });
});

describe('unshiftLayerIds', () => {
  it.skipIf(process.getuid?.() !== 0)('gives host ids in the range back as the sandbox saw them, set-id bits and symlinks kept', () => {
    const dir = tempDir();
    const range = { first: 2_000_000_000, size: 65536 };
    mkdirSync(join(dir, 'opt'));
    writeFileSync(join(dir, 'opt', 'tool'), 'x');
    symlinkSync('tool', join(dir, 'opt', 'link'));
    chownSync(join(dir, 'opt'), range.first, range.first);
    chownSync(join(dir, 'opt', 'tool'), range.first + 1234, range.first + 1234);
    chmodSync(join(dir, 'opt', 'tool'), 0o4755);
    lchownSync(join(dir, 'opt', 'link'), range.first, range.first);
    expect(unshiftLayerIds(dir, range, range)).toBe(3);
    const st = (p: string) => lstatSync(join(dir, p));
    expect([st('opt').uid, st('opt').gid]).toEqual([0, 0]);
    expect([st('opt/tool').uid, st('opt/tool').gid, st('opt/tool').mode & 0o7777]).toEqual([1234, 1234, 0o4755]);
    expect(st('opt/link').isSymbolicLink()).toBe(true);
    expect(st('opt/link').uid).toBe(0);
  });
});
