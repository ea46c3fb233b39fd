// Splits POSIX/bash shell text into words and operators for the command policy. It runs and expands
// nothing; it records, per word, whether its text is only known at run time (an expansion, a glob, a
// brace, a process substitution) and which scripts the word itself runs ($(…), `…`, <(…), >(…),
// here-doc bodies). Text that a later eval, arithmetic or prompt expansion could read as code
// ('a[$(id)]', PS4='$(id)') is searched for substitutions too: the reader errs towards more commands.

import { closeParen, substitutionsIn } from './shell-scan.js';

export interface Inner {
  script: string;
  /** >(…): the script's stdin is a pipe the outer command writes to. */
  piped: boolean;
}
export interface Word {
  text: string;
  /** Part of the text is only known at run time. */
  dynamic: boolean;
  inner: Inner[];
  /** Any part was quoted (a quoted word is never a reserved word; a quoted here-doc delimiter does not expand). */
  quoted: boolean;
  /** ${x@P}: the value is expanded again as a prompt, running what it holds. */
  evaluates?: boolean;
  /** Attached to a here-doc's delimiter word. */
  heredoc?: { body: string; expands: boolean };
  /** The text from quotes and plain characters only: what a later eval, arithmetic or prompt would read. */
  lit: string;
  /** Unquoted `{` seen, and a `,` or `..` after it: a `}` then makes a brace expansion. */
  brace: { open: number; sep: boolean };
  op?: undefined;
}
export interface Op {
  op: string;
}
export type Token = Word | Op;

const OPERATOR_CHARS = new Set([';', '&', '|', '(', ')', '\n']);
/** Reserved words after which a command starts (where `((` opens arithmetic). */
const BEFORE_COMMAND = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', 'time', 'for', 'coproc']);

/** Decodes $'…' from just after the opening quote; returns the text and the index after the closing quote. */
function ansiC(s: string, from: number): [string, number] {
  let out = '';
  let i = from;
  for (; i < s.length && s[i] !== "'"; i++) {
    if (s[i] !== '\\') {
      out += s[i];
      continue;
    }
    const m = /^(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/s.exec(s.slice(i + 1));
    const e = m ? m[0] : '';
    i += e.length;
    if (/^[xuU][0-9a-fA-F]/.test(e)) {
      const code = parseInt(e.slice(1), 16);
      out += code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
    } else if (/^[0-7]/.test(e)) out += String.fromCharCode(parseInt(e, 8) & 0xff);
    else if (e[0] === 'c') out += String.fromCharCode(e.charCodeAt(1) & 0x1f);
    else
      out += ({ n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v' } as Record<string, string>)[e] ?? e;
  }
  return [out, i + 1];
}

export function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  const heredocs: { word: Word; strip: boolean }[] = [];
  let awaitingDelimiter: boolean | null = null; // strip-tabs flag of a << whose delimiter comes next
  let i = 0;
  let word: Word | null = null;
  const begin = (): Word => (word ??= { text: '', dynamic: false, inner: [], quoted: false, lit: '', brace: { open: 0, sep: false } });
  const add = (w: Word, t: string) => {
    w.text += t;
    w.lit += t;
  };
  const end = () => {
    if (!word) return;
    const w: Word = word;
    word = null;
    for (const script of substitutionsIn(w.lit)) w.inner.push({ script, piped: false });
    tokens.push(w);
    if (awaitingDelimiter !== null) {
      heredocs.push({ word: w, strip: awaitingDelimiter });
      awaitingDelimiter = null;
    }
  };
  const sub = (w: Word, script: string, piped = false) => {
    w.inner.push({ script, piped });
    w.dynamic = true;
  };
  const expansion = (quoted: boolean): void => {
    const w = begin();
    const next = s[i + 1];
    if (next === '(' || next === '[') {
      // $(…), $((…)) and $[…]: arithmetic still runs the substitutions inside it
      const close = closeParen(s, i + 2, next, next === '(' ? ')' : ']');
      const body = s.slice(i + 2, close);
      // $((…)) is arithmetic only when its inner paren closes right before the outer one: $( (a); b ) is not
      const arithmetic = next === '[' || (s[i + 2] === '(' && closeParen(s, i + 3) + 1 === close);
      if (!arithmetic) sub(w, body);
      else for (const inner of substitutionsIn(body)) sub(w, inner);
      w.dynamic = true;
      w.text += next === '(' ? '$(…)' : '$[…]';
      i = close + 1;
    } else if (next === '{') {
      const close = closeParen(s, i + 2, '{', '}');
      const body = s.slice(i + 2, close);
      if (/^[\s|]/.test(body))
        sub(w, body.slice(1)); // ${ cmd; } and ${| cmd; } (bash 5.3, ksh93) run cmd
      else for (const inner of substitutionsIn(body)) sub(w, inner);
      if (/@P$/.test(body)) w.evaluates = true;
      w.dynamic = true;
      w.text += '${…}';
      i = close + 1;
    } else if (next !== undefined && /[A-Za-z0-9_@*#?$!-]/.test(next)) {
      w.dynamic = true;
      let j = i + 1;
      if (/[A-Za-z_]/.test(next)) while (j < s.length && /[A-Za-z0-9_]/.test(s[j]!)) j++;
      else j++;
      w.text += s.slice(i, j);
      i = j;
    } else if (!quoted && next === "'") {
      w.quoted = true;
      const [text, after] = ansiC(s, i + 2);
      add(w, text);
      i = after;
    } else if (!quoted && next === '"')
      i++; // $"…" is "…" translated: the same word
    else {
      add(w, '$');
      i++;
    }
  };
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\') {
      if (s[i + 1] === '\n') i += 2;
      else {
        const w = begin();
        w.quoted = true;
        add(w, s[i + 1] ?? '');
        i += 2;
      }
    } else if (c === "'") {
      const close = s.indexOf("'", i + 1);
      const w = begin();
      w.quoted = true;
      add(w, s.slice(i + 1, close < 0 ? s.length : close));
      i = close < 0 ? s.length : close + 1;
    } else if (c === '"') {
      const w = begin();
      w.quoted = true;
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === '\\' && i + 1 < s.length && '$`"\\\n'.includes(s[i + 1]!)) {
          if (s[i + 1] !== '\n') add(w, s[i + 1]!);
          i += 2;
        } else if (s[i] === '$') expansion(true);
        else if (s[i] === '`') i = backtick(s, i, w);
        else add(w, s[i++]!);
      }
      i++;
    } else if (c === '`') {
      i = backtick(s, i, begin());
    } else if (c === '$') {
      expansion(false);
    } else if ('<>@!+*?'.includes(c) && s[i + 1] === '(') {
      // <(…) >(…) process substitution; @(…) !(…) +(…) *(…) ?(…) extglob (read as a script too)
      const close = closeParen(s, i + 2);
      const w = begin();
      sub(w, s.slice(i + 2, close), c === '>');
      w.text += `${c}(…)`;
      i = close + 1;
    } else if (c === '#' && !word) {
      while (i < s.length && s[i] !== '\n') i++;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      end();
      i++;
    } else if (OPERATOR_CHARS.has(c)) {
      end();
      const two = s.slice(i, i + 2);
      const last = tokens.at(-1);
      const commandStart = !last || last.op !== undefined || (!last.quoted && BEFORE_COMMAND.has(last.text));
      if (two === '((' && commandStart && closeParen(s, i + 2) + 1 === closeParen(s, i + 1)) {
        // (( … )) is arithmetic, not a command: nothing in it is a program or a here-doc, but $(…) still runs
        const close = closeParen(s, i + 1);
        const w = begin();
        w.text = '((…))';
        for (const script of substitutionsIn(s.slice(i + 2, close - 1))) w.inner.push({ script, piped: false });
        i = close + 1;
        end();
      } else if (two === '&&' || two === '||' || two === ';;' || two === '|&' || two === ';&') {
        tokens.push({ op: two });
        i += 2;
      } else if (c === '&' && s[i + 1] === '>') {
        begin().text += '&';
        i++;
      } else {
        tokens.push({ op: c });
        i++;
        if (c === '\n') i = readHeredocs(s, i, heredocs.splice(0));
      }
    } else if (c === '<' || c === '>') {
      // a redirection operator is its own word, glued to a fd number or {name} already in `word`
      const w = word as Word | null;
      if (w && !/^(\d+|&|\{[A-Za-z_][A-Za-z0-9_]*\})$/.test(w.text)) end();
      const r = begin();
      let j = i;
      while (j < s.length && '<>&|-'.includes(s[j]!) && j - i < 3) j++;
      r.text += s.slice(i, j);
      i = j;
      end();
      const op = r.text.replace(/^(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})/, '');
      if (op === '<<' || op === '<<-') awaitingDelimiter = op === '<<-';
    } else if (c === '*' || c === '?' || c === '[') {
      const w = begin();
      add(w, c);
      if (!(c === '[' && (s[i + 1] === undefined || /[\s[]/.test(s[i + 1]!)))) w.dynamic = true;
      i++;
    } else {
      const w = begin();
      if (c === '{') w.brace.open++;
      else if (w.brace.open > 0 && (c === ',' || (c === '.' && s[i + 1] === '.'))) w.brace.sep = true;
      else if (c === '}' && w.brace.open > 0 && w.brace.sep) w.dynamic = true; // {a,b} {1..3}: the words are made at run time
      add(w, c);
      i++;
    }
  }
  end();
  return tokens;
}

/** Reads the bodies of the here-docs whose operators were on the line that just ended. */
function readHeredocs(s: string, i: number, pending: { word: Word; strip: boolean }[]): number {
  for (const { word, strip } of pending) {
    let body = '';
    while (i < s.length) {
      const nl = s.indexOf('\n', i);
      const line = s.slice(i, nl < 0 ? s.length : nl);
      i = nl < 0 ? s.length : nl + 1;
      if ((strip ? line.replace(/^\t+/, '') : line) === word.lit) break;
      body += `${line}\n`;
    }
    const expands = !word.quoted && /[$`]/.test(body);
    word.heredoc = { body, expands };
    for (const script of substitutionsIn(body)) word.inner.push({ script, piped: false });
  }
  return i;
}

function backtick(s: string, at: number, w: Word): number {
  let j = at + 1;
  let body = '';
  while (j < s.length && s[j] !== '`') {
    if (s[j] === '\\' && j + 1 < s.length) {
      body += s[j + 1];
      j += 2;
    } else body += s[j++];
  }
  w.inner.push({ script: body, piped: false });
  w.dynamic = true;
  w.text += '`…`';
  return j + 1;
}
