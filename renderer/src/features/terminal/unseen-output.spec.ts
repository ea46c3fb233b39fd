// Checked against xterm itself (its core runs in Node without a page): the text with the unseen
// lines left out must leave exactly the buffer, cursor and parser state the whole text leaves.
import { describe, expect, it } from 'vitest';
import xterm from '@xterm/xterm';
import { advance, leaveOutUnseen, unseenPrefix } from './unseen-output.js';

const { Terminal } = xterm;
type Term = InstanceType<typeof Terminal>;

const ROWS = 6;
const SCROLLBACK = 20;

function make(): Term {
  return new Terminal({ cols: 30, rows: ROWS, scrollback: SCROLLBACK, allowProposedApi: true });
}

const write = (t: Term, data: string) => new Promise<void>((resolve) => t.write(data, resolve));

function snapshot(t: Term) {
  const b = t.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < b.length; i++) {
    const line = b.getLine(i)!;
    lines.push(`${line.isWrapped ? '+' : ' '}${line.translateToString()}`);
  }
  return { lines, x: b.cursorX, y: b.cursorY, base: b.baseY, type: b.type };
}

/** Writes `before`, then `flood` both ways; returns both snapshots and how much was left out. */
async function both(before: string, flood: string, after = 'END\r\n') {
  const whole = make();
  const cut = make();
  const offs: Array<() => void> = [];
  const prepare = leaveOutUnseen(cut, offs);
  await write(whole, before);
  await write(cut, prepare(before));
  await write(whole, flood);
  const kept = prepare(flood);
  await write(cut, kept);
  await write(whole, after);
  await write(cut, prepare(after));
  for (const off of offs) off();
  return { whole: snapshot(whole), cut: snapshot(cut), left: flood.length - kept.length };
}

const lines = (n: number, width = 28, eol = '\r\n') =>
  Array.from({ length: n }, (_, i) => `${i}`.padEnd(width, 'x').slice(0, width) + eol).join('');

describe('leaving out lines that scroll by unseen', () => {
  it('leaves out most of a plain flood and ends in the same state', async () => {
    const r = await both('$ cat big\r\n', lines(400));
    expect(r.left).toBeGreaterThan(300 * 30);
    expect(r.cut).toEqual(r.whole);
  });

  it('the same after colours, a window title (OSC … BEL), a half line, and wrapped lines', async () => {
    const before = '\x1b[1;32muser\x1b[0m:\x1b]0;title\x07$ partial line no newline';
    const r = await both(before, lines(400, 45));
    expect(r.left).toBeGreaterThan(0);
    expect(r.cut).toEqual(r.whole);
  });

  it('the same with the cursor up the screen and old text on it, and LF without CR in the flood', async () => {
    const r = await both('a\r\nb\r\nc\r\n\x1b[2;5Hmid', lines(200, 10, '\n') + lines(200));
    expect(r.cut).toEqual(r.whole);
  });

  it('leaves nothing out inside an unfinished sequence, in a scroll region, or in the alternate screen', async () => {
    for (const before of ['\x1b]52;c;', '\x1bP', '\x1b[2;4r', '\x1b[?1049h', '\x9d0;', '\x1b[', '\x1b']) {
      const r = await both(before, lines(400));
      expect(r.left, JSON.stringify(before)).toBe(0);
      expect(r.cut).toEqual(r.whole);
    }
  });

  it('leaves out again once the scroll region is back to the whole screen', async () => {
    const r = await both('\x1b[2;4r\x1b[r\x1b[H', lines(400));
    expect(r.left).toBeGreaterThan(0);
    expect(r.cut).toEqual(r.whole);
  });

  it('never cuts text with escapes or other controls in the part it would leave out', () => {
    const facts = { state: 'ground' as const, plainScrolling: true, rows: ROWS, scrollback: SCROLLBACK };
    expect(unseenPrefix(lines(400), facts)).toBeGreaterThan(0);
    expect(unseenPrefix('\x1b[31m' + lines(400), facts)).toBe(0);
    expect(unseenPrefix('\t' + lines(400), facts)).toBe(0);
    expect(unseenPrefix('é' + lines(400), facts)).toBe(0);
    expect(unseenPrefix(lines(20), facts)).toBe(0);
  });

  it('follows the parser: ground only when every sequence is finished', () => {
    expect(advance('ground', 'plain')).toBe('ground');
    expect(advance('ground', 'a\x1b[1;2')).toBe('csi');
    expect(advance('csi', '3m and text')).toBe('ground');
    expect(advance('ground', '\x1b]0;title')).toBe('osc');
    expect(advance('osc', 'more title\x07text')).toBe('ground');
    expect(advance('ground', '\x1bPq#0')).toBe('dcs');
    expect(advance('dcs', '#1\x1b\\')).toBe('ground');
    expect(advance('dcs', 'still \x07 dcs')).toBe('dcs');
    expect(advance('osc', 'x\x18')).toBe('ground');
    expect(advance('ground', '\x1b(0')).toBe('ground');
    expect(advance('ground', '\x1b(')).toBe('esc');
  });
});
