// The real `e2b` SDK against `warden serve` and real Podman, for whole trees: files.list with depth,
// files.remove of a directory with content and files.rename of a directory, each a gateway call
// under the /workspace rules. The attacks: symlinks out of the workspace (in the tree, in the path,
// swapped in while a removal runs), `..`, paths the policy hides or keeps read-only inside the
// tree, a directory moved into itself, trees too deep or too large (refused whole, nothing removed), and
// a tree made one level deeper than the door can remove (makeDir, write, rename: refused before it runs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox, type FilesystemEvent } from 'e2b';
import { openTestServer, type TestServer } from '../test-support/test-server.js';
import { TEST_LABEL_KEY } from '../test-support/test-label.js';
import { failure, pointE2bAt } from '../test-support/e2b-sdk.js';
import { MAX_TREE_DEPTH, MAX_TREE_ENTRIES } from '../engine/podman/file-tree.js';
import { MAX_AGENT_WATCHES } from './e2b/envd-watch.js';

let ts: TestServer;
let sbx: Sandbox;
const AGENT = 'e2b-files';
let restoreEnv = () => {};

const sh = async (cmd: string) => (await sbx.commands.run(cmd)).stdout;
const names = async (path: string, depth: number) => (await sbx.files.list(path, { depth })).map((e) => `${e.path}:${e.type}`);

beforeAll(async () => {
  // The default policy: .env hidden anywhere, /workspace/.git/hooks read-only.
  ts = await openTestServer();
  restoreEnv = pointE2bAt(ts, AGENT);
  sbx = await Sandbox.create({ metadata: { [TEST_LABEL_KEY]: ts.t.runId }, timeoutMs: 600_000 });
  // Outside the workspace, where no file call may reach.
  await sh('mkdir -p /tmp/victim && echo keep > /tmp/victim/keep.txt');
});

afterAll(async () => {
  restoreEnv();
  await ts?.close();
});

describe('files.list with depth', () => {
  it('lists down to the depth asked, full paths, symlinks listed and never entered, hidden paths left out', async () => {
    await sh('mkdir -p ~/t/a/b/c && echo x > ~/t/a/x.txt && echo d > ~/t/a/b/c/d.txt && echo s > ~/t/a/.env && ln -s /tmp/victim ~/t/out');
    expect(await names('t', 1)).toEqual(['/workspace/t/a:dir', '/workspace/t/out:symlink']);
    expect(await names('/home/user/t', 2)).toEqual([
      '/workspace/t/a:dir',
      '/workspace/t/a/b:dir',
      '/workspace/t/a/x.txt:file',
      '/workspace/t/out:symlink',
    ]);
    const deep = await names('t', 10);
    expect(deep).toContain('/workspace/t/a/b/c/d.txt:file');
    expect(deep.some((p) => p.includes('keep.txt') || p.includes('.env'))).toBe(false);
    const listed = ts.audit.entries.filter((e) => e.kind === 'file.listed' && (e.payload as { depth?: number }).depth === 10);
    expect(listed.map((e) => e.payload)).toEqual([expect.objectContaining({ path: '/workspace/t', entries: deep.length })]);
  });

  it('refuses a path through a symlink, out of the workspace, a depth past the bound, and a tree past the entry bound', async () => {
    expect((await failure(sbx.files.list('t/out', { depth: 2 }))).message).toContain('symlink');
    expect((await failure(sbx.files.list('/home/user/../../tmp', { depth: 2 }))).message).toMatch(/workspace/);
    expect((await failure(sbx.files.list('t', { depth: MAX_TREE_DEPTH + 1 }))).message).toContain(`1 to ${MAX_TREE_DEPTH}`);
    await sh(`mkdir -p ~/big/sub && cd ~/big/sub && seq 1 ${MAX_TREE_ENTRIES} | xargs -n 2000 touch`);
    expect((await failure(sbx.files.list('big', { depth: 2 }))).message).toContain(`more than ${MAX_TREE_ENTRIES} entries`);
    // Refused whole: not one file of it goes.
    expect((await failure(sbx.files.remove('big'))).message).toContain(`more than ${MAX_TREE_ENTRIES} entries`);
    expect(await sh('ls ~/big/sub | wc -l')).toBe(`${MAX_TREE_ENTRIES}\n`);
    await sh('rm -rf ~/big');
  });
});

describe('files.remove of a directory with content', () => {
  it('removes it whole, a symlink in it as the link only, recorded with its size', async () => {
    await sh(
      'mkdir -p ~/rm/a/b ~/kept && echo 1 > ~/rm/a/b/f && echo k > ~/kept/k && ln -s /tmp/victim ~/rm/a/out && ln -s ~/kept ~/rm/in',
    );
    await sbx.files.remove('rm');
    expect(await sbx.files.exists('rm')).toBe(false);
    expect(await sh('cat /tmp/victim/keep.txt ~/kept/k')).toBe('keep\nk\n');
    const removed = ts.audit.entries.filter((e) => e.kind === 'file.removed' && (e.payload as { path: string }).path === '/workspace/rm');
    expect(removed.map((e) => e.payload)).toEqual([expect.objectContaining({ type: 'dir', entries: 5 })]);
  });

  it('refuses a tree holding a path the policy hides or keeps read-only, without naming a hidden one', async () => {
    await sh('mkdir -p ~/proj/src && echo s > ~/proj/src/.env && mkdir -p ~/.git/hooks && echo h > ~/.git/hooks/pre-commit');
    const hidden = await failure(sbx.files.remove('proj'));
    expect(hidden.message).toContain('Warden policy');
    expect(hidden.message).not.toContain('.env');
    expect(await sh('cat ~/proj/src/.env')).toBe('s\n');
    const readOnly = await failure(sbx.files.remove('.git'));
    expect(readOnly.message).toContain('read-only');
    expect(await sh('cat ~/.git/hooks/pre-commit')).toBe('h\n');
  });

  it('refuses /workspace itself, `..` and a path through a symlink; a tree deeper than the bound is refused whole', async () => {
    expect((await failure(sbx.files.remove('/home/user'))).message).toMatch(/workspace/);
    expect((await failure(sbx.files.remove('/home/user/../../tmp/victim'))).message).toMatch(/workspace/);
    await sh('ln -sfn /tmp ~/tmp-link');
    expect((await failure(sbx.files.remove('tmp-link/victim'))).message).toContain('symlink');
    const deep = Array.from({ length: MAX_TREE_DEPTH + 2 }, (_, i) => `d${i}`).join('/');
    await sh(`mkdir -p ~/deep/${deep} && echo bottom > ~/deep/${deep}/f`);
    expect((await failure(sbx.files.remove('deep'))).message).toContain(`more than ${MAX_TREE_DEPTH} levels deep`);
    expect(await sh(`cat ~/deep/${deep}/f`)).toBe('bottom\n');
    expect(await sh('cat /tmp/victim/keep.txt')).toBe('keep\n');
  });

  it('never follows a directory swapped for a symlink while the removal walks', async () => {
    // The sandbox swaps a directory in the tree for a link to /tmp/victim, again and again, while removals run.
    const swapper = await sbx.commands.run(
      'cd ~ && while true; do mkdir -p sw/d && touch sw/d/f sw/g; mv sw/d sw/d.x 2>/dev/null; ln -sfn /tmp/victim sw/d; rm -f sw/d; mv sw/d.x sw/d 2>/dev/null; done',
      { background: true },
    );
    for (let i = 0; i < 15; i++) await sbx.files.remove('sw').catch(() => undefined);
    await swapper.kill();
    expect(await sh('ls /tmp/victim')).toBe('keep.txt\n');
  });
});

describe('what the door makes, it can remove: directories at most MAX_TREE_DEPTH levels below /workspace', () => {
  const chain = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`).join('/');

  it('makes the deepest tree allowed, lists and removes it whole; one level deeper is refused with a clear error, by makeDir, write and rename', async () => {
    const deepest = chain('z', MAX_TREE_DEPTH);
    expect(await sbx.files.makeDir(deepest)).toBe(true);
    await sbx.files.write(`${deepest}/f.txt`, 'bottom');
    expect(await names('/home/user', MAX_TREE_DEPTH)).toContain(`/workspace/${deepest}:dir`);

    // One level deeper, three ways: a directory, a file's parents, a tree renamed to where its directories would be too deep.
    const tooDeep = await failure(sbx.files.makeDir(`${deepest}/z${MAX_TREE_DEPTH + 1}`));
    // Refused before it runs, as a path outside /workspace is: a denial the run and the ledger record, saying why and what to do.
    expect(tooDeep.message).toContain('Warden policy: /workspace/z1/z2/');
    expect(tooDeep.message).toContain(`the directory would be ${MAX_TREE_DEPTH + 1} levels below /workspace`);
    expect(tooDeep.message).toContain(`keep directories at most ${MAX_TREE_DEPTH} levels below /workspace`);
    const tooDeepFile = await failure(sbx.files.write(`${deepest}/z${MAX_TREE_DEPTH + 1}/f.txt`, 'x'));
    expect(tooDeepFile.message).toContain(`the file's directory would be ${MAX_TREE_DEPTH + 1} levels below /workspace`);
    expect(await sbx.files.makeDir('pair/inner')).toBe(true);
    const near = chain('z', MAX_TREE_DEPTH - 1);
    const tooDeepMove = await failure(sbx.files.rename('pair', `${near}/pair`));
    expect(tooDeepMove.message).toContain(`a directory of /workspace/pair would be ${MAX_TREE_DEPTH + 1} levels below /workspace`);
    expect(await sbx.files.exists('pair/inner')).toBe(true);
    // Where it fits, it goes: MAX_TREE_DEPTH - 2 levels, then the pair's two.
    await sbx.files.rename('pair', `${chain('z', MAX_TREE_DEPTH - 2)}/pair`);
    // In the sandbox's own view (find counts from z1, one level below /workspace): the directories 32 levels down, none deeper.
    expect(await sh(`cd ~ && find z1 -mindepth ${MAX_TREE_DEPTH - 1} -type d | sort`)).toBe(
      `${chain('z', MAX_TREE_DEPTH - 2)}/pair/inner\n${deepest}\n`,
    );
    expect(await sh(`cd ~ && find z1 -mindepth ${MAX_TREE_DEPTH} -type d | wc -l`)).toBe('0\n');

    // The whole tree goes from its top, through the door.
    await sbx.files.remove('z1');
    expect(await sbx.files.exists('z1')).toBe(false);
    const removed = ts.audit.entries.filter((e) => e.kind === 'file.removed' && (e.payload as { path: string }).path === '/workspace/z1');
    expect(removed.map((e) => e.payload)).toEqual([expect.objectContaining({ type: 'dir', entries: MAX_TREE_DEPTH + 2 })]);
  });
});

describe('files.rename of a directory', () => {
  it('moves it with its content; never into itself, out of the workspace, through a symlink or over a protected path', async () => {
    await sh('mkdir -p ~/mvd/a && echo m > ~/mvd/a/m.txt');
    const moved = await sbx.files.rename('mvd', '/home/user/mvd2');
    expect(moved).toMatchObject({ name: 'mvd2', type: 'dir', path: '/workspace/mvd2' });
    expect(await sbx.files.read('mvd2/a/m.txt')).toBe('m\n');
    expect(await sbx.files.exists('mvd')).toBe(false);
    expect((await failure(sbx.files.rename('mvd2', 'mvd2/a/inside'))).message).toContain('into itself');
    expect((await failure(sbx.files.rename('mvd2', '/tmp/victim/mvd2'))).message).toMatch(/workspace/);
    expect((await failure(sbx.files.rename('mvd2', 'tmp-link/victim/mvd2'))).message).toContain('symlink');
    expect((await failure(sbx.files.rename('mvd2', '.git/hooks/mvd2'))).message).toContain('read-only');
    // A hidden path inside goes nowhere either.
    await sh('echo s > ~/mvd2/a/.env');
    expect((await failure(sbx.files.rename('mvd2', 'mvd3'))).message).toContain('Warden policy');
    expect(await sh('cat ~/mvd2/a/.env /tmp/victim/keep.txt')).toBe('s\nkeep\n');
    const kinds = ts.audit.entries.filter(
      (e) => e.kind === 'file.moved' && (e.payload as { path: string }).path.startsWith('/workspace/mvd'),
    );
    expect(kinds.map((e) => (e.payload as { type: string }).type)).toEqual(['dir']);
  });
});

/** A watch's events as they come, and a way to wait for the one a step makes (never a time). */
function collector() {
  const seen: string[] = [];
  const waiting: { want: string; resolve: () => void; reject: (err: Error) => void }[] = [];
  let ended: Error | null = null;
  const onEvent = (e: FilesystemEvent) => {
    const key = `${e.type} ${e.name}`;
    seen.push(key);
    for (const w of waiting.filter((w) => w.want === key)) w.resolve();
  };
  // A watch that ends says why at once, instead of leaving its awaited event to the spec's timeout.
  const onExit = (err?: Error) => {
    ended = new Error(`the watch ended (${err?.message ?? 'no error'}) before: ${waiting.map((w) => w.want).join(', ')}`);
    for (const w of waiting.splice(0)) w.reject(ended);
  };
  const next = (want: string) =>
    seen.includes(want)
      ? Promise.resolve()
      : ended
        ? Promise.reject(ended)
        : new Promise<void>((resolve, reject) => waiting.push({ want, resolve, reject }));
  return { seen, onEvent, onExit, next };
}

describe('files.watchDir (polled)', () => {
  it('reports creates, writes, mode changes and removes; one level unless recursive; hidden paths never', async () => {
    await sbx.files.makeDir('w');
    const flat = collector();
    const deep = collector();
    const flatWatch = await sbx.files.watchDir('w', flat.onEvent, { timeoutMs: 0, onExit: flat.onExit });
    const deepWatch = await sbx.files.watchDir('/home/user/w', deep.onEvent, { recursive: true, timeoutMs: 0, onExit: deep.onExit });
    await sbx.files.write('w/a.txt', 'one');
    await flat.next('create a.txt');
    await sbx.files.write('w/a.txt', 'two, longer');
    await flat.next('write a.txt');
    await sh('chmod 600 ~/w/a.txt');
    await flat.next('chmod a.txt');
    await sh('echo s > ~/w/.env && mkdir -p ~/w/sub/.env && echo i > ~/w/sub/.env/inner');
    await sbx.files.write('w/sub/x.txt', 'x');
    await deep.next('create sub/x.txt');
    await sbx.files.remove('w/a.txt');
    await flat.next('remove a.txt');
    await deep.next('remove a.txt');
    expect(flat.seen).toContain('create sub');
    expect(flat.seen.some((k) => k.includes('sub/'))).toBe(false);
    expect([...flat.seen, ...deep.seen].some((k) => k.includes('.env'))).toBe(false);
    await flatWatch.stop();
    await deepWatch.stop();
    // The watch is one call in the run (its first look); its polls are not calls of their own.
    const looks = ts.audit.entries.filter((e) => e.kind === 'file.listed' && (e.payload as { path: string }).path === '/workspace/w');
    expect(looks.map((e) => (e.payload as { depth: number }).depth)).toEqual([1, MAX_TREE_DEPTH]);
  });

  it('refuses a watch through a symlink or out of the workspace, and more than the watches an agent may hold', async () => {
    await sh('ln -sfn /tmp/victim ~/victim-link');
    expect((await failure(sbx.files.watchDir('victim-link', () => undefined))).message).toContain('symlink');
    expect((await failure(sbx.files.watchDir('/tmp/victim', () => undefined))).message).toMatch(/workspace/);
    // Counted per agent: a second agent, so the watches above (their ends are the server's to notice) do not count here.
    const apiKey = ts.server.tokens.create('e2b-watch-limit').token;
    const other = await Sandbox.create({ apiKey, metadata: { [TEST_LABEL_KEY]: ts.t.runId } });
    const held = [];
    for (let i = 0; i < MAX_AGENT_WATCHES; i++) held.push(await other.files.watchDir('.', () => undefined, { timeoutMs: 0 }));
    expect((await failure(other.files.watchDir('.', () => undefined))).message).toContain('watches open');
    await Promise.all(held.map((h) => h.stop()));
    await other.kill();
  });
});
