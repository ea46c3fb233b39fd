// A restore stays in /workspace, on real Podman. The archive is Warden's own, but the sandbox wrote it
// (its tar streamed it) and could have planted symlinks in a host workspace before a reset: members
// named `../x` or `/x`, a symlink to a host path and then a file "through" it, and a planted link to
// /etc in place of a folder must land nowhere outside /workspace, in the sandbox or on the host.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestWarden, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import { restoreWorkspace } from './workspace-archive.js';

let w: TestWarden | undefined;
let scratch: string;
const images: string[] = [];
beforeAll(async () => {
  w = await openTestWarden();
  scratch = mkdtempSync(join(tmpdir(), 'warden-restore-attack-'));
});
afterAll(async () => {
  await closeTestWarden(w);
  if (images.length) spawnSync('podman', ['rmi', '-f', ...images], { stdio: 'ignore' });
  rmSync(scratch, { recursive: true, force: true });
});

/** An archive a lying tar could have sent: escapes by name and through a symlink, among honest members. */
function craftedArchive(hostTarget: string): string {
  const file = join(scratch, 'crafted.tar');
  const py = `
import tarfile, io, sys
t = tarfile.open(sys.argv[1], 'w', format=tarfile.GNU_FORMAT)
def f(name, data=b'x'):
    i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
def l(name, target):
    i = tarfile.TarInfo(name); i.type = tarfile.SYMTYPE; i.linkname = target; t.addfile(i)
f('./ok.txt', b'honest')
f('../escape-up.txt'); f('./a/../../escape-mid.txt'); f('/escape-abs.txt')
l('./etc-link', '/etc'); f('./etc-link/planted')
l('./host-link', sys.argv[2]); f('./host-link/planted')
t.close()`;
  const r = spawnSync('python3', ['-c', py, file, hostTarget], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return file;
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('a restore stays in /workspace', () => {
  it('members that name or link their way out land nowhere outside, in the sandbox or on the host', async () => {
    const { t } = w!;
    const hostWs = mkdtempSync(join(scratch, 'ws-'));
    const hostTarget = mkdtempSync(join(scratch, 'target-'));
    const sb = await t.create({ workspace: hostWs });
    const archive = craftedArchive(hostTarget);
    // GNU tar refuses the `..` members and says so (a failed restore: the caller drops the sandbox it made).
    await restoreWorkspace(t.engine.connection, sb.id, archive, sha256(archive)).catch(() => undefined);
    const outside = await t.sh(sb.id, 'ls -a / /etc /workspace/..');
    expect(outside.out).not.toMatch(/escape|planted/);
    // A leading `/` is stripped: that member lands inside; the links are there, nothing went through them.
    const inside = await t.sh(sb.id, 'ls /workspace; cat /workspace/ok.txt; ls /workspace/etc-link/planted /workspace/host-link/planted');
    expect(inside.out).toBe('escape-abs.txt\netc-link\nhost-link\nok.txt\nhonest');
    // On the host: nothing beside the workspace, nothing in the directory a link named.
    expect(existsSync(join(scratch, 'escape-up.txt'))).toBe(false);
    expect(existsSync(join(scratch, 'escape-mid.txt'))).toBe(false);
    expect(existsSync(join(hostTarget, 'planted'))).toBe(false);
    // Everything of it on the host is under the workspace (the stripped `/escape-abs.txt` among it).
    const found = spawnSync('find', [scratch, '(', '-name', '*escape*', '-o', '-name', 'planted', ')'], { encoding: 'utf8' }).stdout;
    expect(found.trim().split('\n')).toEqual([join(hostWs, 'escape-abs.txt')]);
  });

  it('a symlink the sandbox planted where a folder was is removed, never followed', async () => {
    const { t, engine } = w!;
    const hostWs = mkdtempSync(join(scratch, 'ws-'));
    const sb = await t.create({ workspace: hostWs });
    expect((await t.sh(sb.id, 'mkdir -p /workspace/d && echo kept > /workspace/d/f')).exitCode).toBe(0);
    const snap = await engine.snapshots.snapshot(sb.name, 'planted');
    images.push(snap.imageId);
    // The folder becomes a link to /etc (in the host directory too), then the sandbox is reset.
    expect((await t.sh(sb.id, 'rm -r /workspace/d && ln -s /etc /workspace/d')).exitCode).toBe(0);
    expect(lstatSync(join(hostWs, 'd')).isSymbolicLink()).toBe(true);
    const reset = await engine.snapshots.reset(sb.name, 'planted');
    expect(lstatSync(join(hostWs, 'd')).isDirectory()).toBe(true);
    expect(readFileSync(join(hostWs, 'd', 'f'), 'utf8')).toBe('kept\n');
    expect((await t.sh(reset.id, 'test ! -e /etc/f && test -d /workspace/d && test ! -L /workspace/d')).exitCode).toBe(0);
    await engine['sandbox.destroy']({ ref: sb.name });
    await engine.snapshots.remove(sb.name, 'planted');
  });
});
