// A conservative reader of POSIX shell text: it finds every simple command a script would run, so
// policy can check each one. It does not run or expand anything. Where the program a command runs is
// only known at run time ($CMD, `…`, eval of a variable), the command is marked dynamic, and policy
// decides what to do with commands it cannot see. Anything it misreads errs towards more commands.

export interface SimpleCommand {
  argv: string[];
  /** The program word holds an expansion: what runs is only known at run time. */
  dynamic: boolean;
}

const OPERATOR_CHARS = new Set([';', '&', '|', '(', ')', '\n']);
const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'for', 'case', 'esac', 'in', '{', '}', '!', 'select', 'function', '[[', ']]', 'time', 'coproc']);
const REDIRECT = /^(\d*|&)(>>?|<<?-?|<<<|<>|>&|<&|>\||&>>?)$/;
const REDIRECT_GLUED = /^(\d*|&)(>>?|<<<?-?|<>|>&|<&|>\||&>>?)(.+)$/;
export const MAX_DEPTH = 8;

interface Word {
  text: string;
  /** Contains an unquoted or double-quoted expansion ($x, ${x}, $(…), `…`, glob chars). */
  dynamic: boolean;
  /** Scripts found inside $(…), `…`, <(…), >(…) in this word. */
  inner: string[];
  /** Holds an unquoted glob character: a program named by a pattern is only known at run time. */
  glob?: boolean;
  op?: undefined;
}
interface Op {
  op: string;
}
type Token = Word | Op;

/** Finds the end of a $( … ) or <( … ) group starting after the open paren; respects quotes and nesting. */
function closeParen(s: string, from: number): number {
  let depth = 1;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) return s.length;
      i = end;
    } else if (c === '"') {
      for (i++; i < s.length && s[i] !== '"'; i++) if (s[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return s.length;
}

function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let word: Word | null = null;
  const begin = () => (word ??= { text: '', dynamic: false, inner: [] });
  const end = () => {
    if (word?.glob && word.text !== '[' && word.text !== '[[') word.dynamic = true;
    if (word) tokens.push(word);
    word = null;
  };
  const expansion = (quoted: boolean): void => {
    // at s[i] === '$'
    const w = begin();
    const next = s[i + 1];
    if (next === '(') {
      const close = closeParen(s, i + 2);
      const arithmetic = s[i + 2] === '(';
      if (!arithmetic) w.inner.push(s.slice(i + 2, close));
      w.dynamic = true;
      w.text += '$(…)';
      i = arithmetic ? Math.min(s.length, closeParen(s, close + 1) + 1) : close + 1;
    } else if (next === '{') {
      const close = s.indexOf('}', i + 2);
      w.inner.push(...innerScriptsOfParam(s.slice(i + 2, close < 0 ? s.length : close)));
      w.dynamic = true;
      w.text += '${…}';
      i = close < 0 ? s.length : close + 1;
    } else if (next !== undefined && /[A-Za-z0-9_@*#?$!-]/.test(next)) {
      w.dynamic = true;
      let j = i + 1;
      if (/[A-Za-z_]/.test(next)) while (j < s.length && /[A-Za-z0-9_]/.test(s[j]!)) j++;
      else j++;
      w.text += s.slice(i, j);
      i = j;
    } else if (!quoted && next === "'") {
      // $'…' ANSI-C quoting: decode the escapes that matter for names.
      const close = s.indexOf("'", i + 2);
      const raw = s.slice(i + 2, close < 0 ? s.length : close);
      w.text += decodeAnsiC(raw);
      i = close < 0 ? s.length : close + 1;
    } else {
      w.text += '$';
      i++;
    }
  };
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\') {
      if (s[i + 1] === '\n') i += 2;
      else {
        begin().text += s[i + 1] ?? '';
        i += 2;
      }
    } else if (c === "'") {
      const close = s.indexOf("'", i + 1);
      begin().text += s.slice(i + 1, close < 0 ? s.length : close);
      i = close < 0 ? s.length : close + 1;
    } else if (c === '"') {
      const w = begin();
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === '\\' && i + 1 < s.length && '$`"\\\n'.includes(s[i + 1]!)) {
          if (s[i + 1] !== '\n') w.text += s[i + 1];
          i += 2;
        } else if (s[i] === '$') expansion(true);
        else if (s[i] === '`') i = backtick(s, i, w);
        else w.text += s[i++];
      }
      i++;
    } else if (c === '`') {
      i = backtick(s, i, begin());
    } else if (c === '$') {
      expansion(false);
    } else if ((c === '<' || c === '>') && s[i + 1] === '(') {
      const close = closeParen(s, i + 2);
      const w = begin();
      w.inner.push(s.slice(i + 2, close));
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
      if (two === '&&' || two === '||' || two === ';;' || two === '|&') {
        tokens.push({ op: two });
        i += 2;
      } else if (c === '&' && s[i + 1] === '>') {
        begin().text += '&';
        i++;
      } else {
        tokens.push({ op: c });
        i++;
      }
    } else if (c === '<' || c === '>') {
      // a redirection operator is its own word unless glued to a fd number already in `word`
      const w: Word = word ?? { text: '', dynamic: false, inner: [] };
      if (w.text !== '' && !/^\d+$|^&$/.test(w.text)) end();
      begin();
      let j = i;
      while (j < s.length && '<>&|-'.includes(s[j]!) && j - i < 3) j++;
      word!.text += s.slice(i, j);
      i = j;
      end();
    } else if (c === '*' || c === '?' || c === '[') {
      const w = begin();
      w.text += c;
      w.glob = true;
      i++;
    } else {
      begin().text += c;
      i++;
    }
  }
  end();
  return tokens;
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
  w.inner.push(body);
  w.dynamic = true;
  w.text += '`…`';
  return j + 1;
}

/** ${x:-$(cmd)} and friends may run commands in their words. */
function innerScriptsOfParam(body: string): string[] {
  const found: string[] = [];
  for (let i = body.indexOf('$('); i >= 0; i = body.indexOf('$(', i + 2)) found.push(body.slice(i + 2, closeParen(body, i + 2)));
  const ticks = body.split('`');
  for (let k = 1; k < ticks.length; k += 2) found.push(ticks[k]!);
  return found;
}

function decodeAnsiC(raw: string): string {
  return raw.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|u[0-9a-fA-F]{1,4}|.)/g, (_m, e: string) => {
    if (e[0] === 'x') return String.fromCharCode(parseInt(e.slice(1), 16));
    if (e[0] === 'u') return String.fromCharCode(parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8));
    return ({ n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v' } as Record<string, string>)[e] ?? e;
  });
}

/** Every simple command a script would run (including those inside substitutions), in order. */
export function parseScript(script: string, depth = 0): SimpleCommand[] {
  if (depth > MAX_DEPTH) return [{ argv: ['<script nested too deep>'], dynamic: true }];
  const out: SimpleCommand[] = [];
  let current: Word[] = [];
  let skipNext = false;
  const flush = () => {
    const words = current;
    current = [];
    let start = 0;
    // leading assignments (A=b) and reserved words are not the program
    while (start < words.length && (/^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(words[start]!.text) || RESERVED.has(words[start]!.text))) start++;
    const rest = words.slice(start);
    if (rest.length === 0) return;
    out.push({ argv: rest.map((w) => w.text), dynamic: rest[0]!.dynamic });
  };
  for (const token of tokenize(script)) {
    if (token.op !== undefined) {
      flush();
      continue;
    }
    const w = token as Word;
    for (const inner of w.inner) out.push(...parseScript(inner, depth + 1));
    if (skipNext) {
      skipNext = false;
      continue;
    }
    if (REDIRECT.test(w.text)) {
      skipNext = true; // the redirection's target
      continue;
    }
    if (REDIRECT_GLUED.test(w.text) && /^(\d*|&)[<>]/.test(w.text)) continue;
    current.push(w);
  }
  flush();
  return out;
}
