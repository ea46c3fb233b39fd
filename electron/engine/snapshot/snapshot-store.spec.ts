// The pure parts of snapshots: the spec a reset recreates from a sandbox's info, the default tag, the
// store's folders (a tag is never overwritten), and the committed layer's ids given back (as root only).
import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { ownerOf, SnapshotStore, specOf, type SnapshotManifest } from './snapshot-store.js';
import { AGENT_LABEL } from '../gateway/sandbox-access.js';
import { defaultTag } from './snapshot-names.js';
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

/** A finished snapshot's manifest of sandbox `box`, the user's or (owner) an agent's. */
const MANIFEST = (tag: string, owner: string | null, createdAt: string): SnapshotManifest => ({
  sandbox: 'box',
  sandboxId: 'a'.repeat(64),
  tag,
  createdAt,
  image: `localhost/warden-snapshot/aaaaaaaaaaaa:${tag}`,
  imageId: 'b'.repeat(64),
  rootBytes: 1,
  workspaceSha256: 'c'.repeat(64),
  workspaceBytes: 2,
  takenBy: owner ?? 'user',
  spec: owner ? { labels: { [AGENT_LABEL]: owner } } : {},
});

describe('SnapshotStore', () => {
  const manifest = (tag: string, createdAt: string) => MANIFEST(tag, null, createdAt);

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

describe('SnapshotStore: owners kept apart', () => {
  const take = (store: SnapshotStore, m: SnapshotManifest) => {
    store.begin(m.sandbox, m.tag, ownerOf(m));
    store.finish(m);
  };

  it("one tag per owner: another owner's is neither in the way nor named; a scope picks exactly, or prefers, or takes the newest", () => {
    const store = new SnapshotStore(tempDir());
    take(store, MANIFEST('t', 'bot', '2026-01-01T00:00:00.000Z'));
    take(store, MANIFEST('t', 'thief', '2026-01-02T00:00:00.000Z'));
    take(store, MANIFEST('t', null, '2026-01-03T00:00:00.000Z'));
    expect(() => store.begin('box', 't', 'thief')).toThrow(expect.objectContaining({ code: 'E_CONFLICT' }));
    expect(store.list('box').map((m) => m.takenBy)).toEqual(['bot', 'thief', 'user']);
    expect(store.get('box', 't', { owner: 'bot' }).takenBy).toBe('bot');
    expect(() => store.get('box', 't', { owner: 'other' })).toThrow(expect.objectContaining({ code: 'E_NOT_FOUND' }));
    expect(store.get('box', 't', { prefer: 'thief' }).takenBy).toBe('thief');
    expect(store.get('box', 't', { prefer: 'nobody' }).takenBy).toBe('user');
    expect(store.get('box', 't').takenBy).toBe('user');
    // An owner is a path component: only an agent's name is one.
    expect(() => store.begin('box', 't', '../x')).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT' }));
  });

  it("moves an older home's agent snapshots into their owner's folder once, and leaves the user's and unfinished ones", () => {
    const home = tempDir();
    const legacy = (m: SnapshotManifest | null, tag: string) => {
      mkdirSync(join(home, 'snapshots', 'box', tag), { recursive: true });
      writeFileSync(join(home, 'snapshots', 'box', tag, 'workspace.tar'), tag);
      if (m) writeFileSync(join(home, 'snapshots', 'box', tag, 'manifest.json'), JSON.stringify(m));
    };
    legacy(MANIFEST('agents', 'bot', '2026-01-01T00:00:00.000Z'), 'agents');
    legacy(MANIFEST('users', null, '2026-01-02T00:00:00.000Z'), 'users');
    legacy(null, 'unfinished');
    const store = new SnapshotStore(home);
    expect(store.list('box').map((m) => [m.tag, m.takenBy])).toEqual([
      ['agents', 'bot'],
      ['users', 'user'],
    ]);
    expect(readFileSync(store.archivePath('box', 'agents', 'bot'), 'utf8')).toBe('agents');
    expect(existsSync(join(home, 'snapshots', 'box', 'agents'))).toBe(false);
    expect(readFileSync(store.archivePath('box', 'users'), 'utf8')).toBe('users');
    expect(existsSync(join(home, 'snapshots', 'box', 'unfinished'))).toBe(true);
    // The tag is free for the user now, and the bot's is still its own.
    take(store, MANIFEST('agents', null, '2026-01-03T00:00:00.000Z'));
    expect(new SnapshotStore(home).get('box', 'agents', { owner: 'bot' }).takenBy).toBe('bot');
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
