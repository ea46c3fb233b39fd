// A flood of plain lines (`cat` of a big log, `base64` of a file) mostly scrolls through the
// scrollback and out of it before anyone could see it, yet xterm parses every character of it,
// and on a slow machine that parse is what caps the terminal's speed. Before a big write, the
// lines that would only be pushed through and out are left out, when that provably leaves xterm
// in exactly the state the whole text would have:
//   - the text cut is plain: printable ASCII, CR and LF only (no escape sequence, no control that
//     changes a mode, nothing wide), and the parser is in its ground state before it (tracked here
//     over everything written, conservatively: anything unclear counts as not ground);
//   - the normal buffer is shown and no scroll region was set (every LF at the bottom scrolls a
//     line into the scrollback);
//   - what is kept holds more line feeds than the scrollback and twice the screen: every row the
//     cut text touched, and every row that held something before, is out of the buffer by the
//     end, and a CR after the first screenful of kept lines puts the cursor where it would be.
// What is left out is never interpreted at all, so this cannot show anything the full text would
// not; the scrollback ends with the same lines, the screen is the same.

import type { Terminal } from '@xterm/xterm';

/** Parser state at the end of the text written so far, as far as the cut needs to know it. */
export type ParseState = 'ground' | 'csi' | 'osc' | 'dcs' | 'esc' | 'unknown';

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;

/** Characters that can start, end or abort a sequence (C1 controls included: xterm honours them). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const SPECIAL = /[\x07\x18\x1a\x1b\x80-\x9f]/;

function isIntroducer(c: number): boolean {
  return c === ESC || (c >= 0x80 && c <= 0x9f);
}

/** The parser state after `text`, given the state before it. */
export function advance(state: ParseState, text: string): ParseState {
  if (!SPECIAL.test(text)) {
    // Plain text ends an ESC or CSI sequence (its final byte) and nothing else.
    return state === 'esc' || state === 'csi' ? stepFrom(state, text, 0) : state;
  }
  // Every ESC or C1 introducer starts over, whatever came before: run from the last one.
  let from = text.length - 1;
  while (from >= 0 && !isIntroducer(text.charCodeAt(from))) from--;
  if (from < 0) return stepFrom(state, text, 0);
  return stepFrom('ground', text, from);
}

/** Runs the state machine from `at`; no introducer may follow the first character. */
function stepFrom(state: ParseState, text: string, at: number): ParseState {
  let s = state;
  for (let i = at; i < text.length; i++) {
    // Without a further introducer nothing leaves the ground state (BEL, CAN, SUB keep it).
    if (s === 'ground' && i > at) return s;
    const c = text.charCodeAt(i);
    if (c === CAN || c === SUB) {
      s = 'ground';
      continue;
    }
    switch (s) {
      case 'ground':
        if (c === ESC) s = 'esc';
        else if (c === 0x9b) s = 'csi';
        else if (c === 0x9d) s = 'osc';
        else if (c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) s = 'dcs';
        else if (c >= 0x80 && c <= 0x9f && c !== 0x9c) s = 'unknown';
        break;
      case 'esc':
        if (c === 0x5b) s = 'csi';
        else if (c === 0x5d) s = 'osc';
        else if (c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) s = 'dcs';
        else if (c >= 0x30 && c <= 0x7e) s = 'ground';
        else if (c >= 0x20 && c <= 0x2f) s = 'esc';
        else if (c === ESC) s = 'esc';
        else if (c >= 0x20) s = 'unknown';
        break;
      case 'csi':
        if (c >= 0x40 && c <= 0x7e) s = 'ground';
        else if (c === ESC) s = 'esc';
        else if (c >= 0x80) s = 'unknown';
        break;
      case 'osc':
        if (c === BEL || c === 0x9c) s = 'ground';
        else if (c === ESC) s = 'esc';
        break;
      case 'dcs':
        if (c === 0x9c) s = 'ground';
        else if (c === ESC) s = 'esc';
        break;
      case 'unknown':
        // Only a fresh introducer that completes tells where the parser is again.
        if (c === ESC) s = 'esc';
        break;
    }
  }
  return s;
}

export interface ScreenFacts {
  /** the parser state before the text */
  state: ParseState;
  /** the normal buffer is shown and its scroll region is the whole screen */
  plainScrolling: boolean;
  rows: number;
  scrollback: number;
}

const PLAIN = /^[\x20-\x7e\r\n]*$/;

/**
 * Where the text can start without changing what xterm ends with: 0 when nothing may be left
 * out, otherwise the index just after the line feed the kept text starts behind.
 */
export function unseenPrefix(text: string, facts: ScreenFacts): number {
  if (facts.state !== 'ground' || !facts.plainScrolling || facts.rows <= 0) return 0;
  const keepFeeds = facts.scrollback + 2 * facts.rows + 1;
  // The (keepFeeds + 1)-th line feed from the end: the kept text starts just after it.
  let at = text.length;
  for (let n = 0; n <= keepFeeds; n++) {
    at = at > 0 ? text.lastIndexOf('\n', at - 1) : -1;
    if (at < 0) return 0;
  }
  const cut = at + 1;
  if (!PLAIN.test(text.slice(0, cut))) return 0;
  // A CR after the first screenful of kept lines: from there on both ways write the same cells.
  let feed = cut - 1;
  for (let n = 0; n < facts.rows; n++) {
    feed = text.indexOf('\n', feed + 1);
    if (feed < 0) return 0;
  }
  return text.indexOf('\r', feed) >= 0 ? cut : 0;
}

/**
 * Shortens what is written to `term` as above. Follows the parser's state over everything written, and whether a
 * scroll region is set (xterm's own handlers still run: these only watch).
 */
export function leaveOutUnseen(term: Terminal, offs: Array<() => void>): (data: string) => string {
  let state: ParseState = 'ground';
  let region = false;
  const handlers = [
    term.parser.registerCsiHandler({ final: 'r' }, (params) => {
      const top = Number(params[0] ?? 0) || 1;
      const bottom = Number(params[1] ?? 0);
      region = !(top === 1 && (params.length < 2 || bottom === 0 || bottom >= term.rows));
      return false;
    }),
    term.parser.registerCsiHandler({ intermediates: '!', final: 'p' }, () => ((region = false), false)),
    term.parser.registerEscHandler({ final: 'c' }, () => ((region = false), false)),
  ];
  offs.push(() => handlers.forEach((h) => h.dispose()));
  return (data) => {
    const cut = unseenPrefix(data, {
      state,
      plainScrolling: !region && term.buffer.active.type === 'normal',
      rows: term.rows,
      scrollback: term.options.scrollback ?? 1000,
    });
    const kept = cut > 0 ? data.slice(cut) : data;
    state = advance(state, kept);
    return kept;
  };
}
