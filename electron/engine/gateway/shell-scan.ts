// Finds where a region of shell text ends — a $(…), ${…} or $[…], a double-quoted string, backticks,
// $'…' — stepping over what the shell steps over (quotes, nested substitutions, comments, here-doc
// bodies, `case` patterns), and lists the scripts a text would run if read as code. The lexer and the
// policy both rely on these ends: an end found too early leaves text outside a substitution that the
// shell reads inside it.

let steps = Infinity;

/** Scanning is synchronous, on the event loop: one decision may take at most `budget` steps, then it throws. */
export function withScanBudget<T>(budget: number, read: () => T): T {
  const saved = steps;
  steps = budget;
  try {
    return read();
  } finally {
    steps = saved;
  }
}

/** The index of the paren closing one opened just before `from`. Quotes, nested substitutions,
 *  backticks, $'…', comments, here-doc bodies and `case` patterns are stepped over, as the shell does. */
export function closeParen(s: string, from: number, open = '(', close = ')'): number {
  let depth = 1;
  let cases = 0; // inside `case … esac` a `)` ends a pattern, not the substitution
  const heredocs: { delim: string; strip: boolean }[] = [];
  const code = open === '(';
  for (let i = from; i < s.length; i++) {
    if (--steps < 0) throw new RangeError('the command is too complex to read');
    const c = s[i]!;
    const atWord = i === from || /[\s;&|(]/.test(s[i - 1]!);
    if (code && atWord && /^case\s/.test(s.slice(i, i + 5))) cases++;
    else if (code && atWord && cases > 0 && /^esac(?![A-Za-z0-9_])/.test(s.slice(i, i + 5))) cases--;
    if (c === '\\') i++;
    else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) return s.length;
      i = end;
    } else if (c === '$' && s[i + 1] === "'") i = closeAnsi(s, i + 2);
    else if (c === '$' && (s[i + 1] === '(' || s[i + 1] === '{')) i = closeParen(s, i + 2, s[i + 1], s[i + 1] === '(' ? ')' : '}');
    else if (c === '"') i = closeDouble(s, i + 1);
    else if (c === '`') i = closeBacktick(s, i + 1);
    else if (code && c === '#' && atWord) {
      while (i + 1 < s.length && s[i + 1] !== '\n') i++;
    } else if (code && c === '<' && s[i + 1] === '<' && s[i + 2] !== '<') {
      const m = /^<<(-?)[ \t]*((?:'[^']*'|"[^"]*"|\\.|[^\s;&|<>()])+)/.exec(s.slice(i));
      if (m) {
        heredocs.push({ delim: m[2]!.replace(/['"\\]/g, ''), strip: m[1] === '-' });
        i += m[0].length - 1;
      }
    } else if (code && c === '\n' && heredocs.length) {
      let j = i + 1;
      for (const { delim, strip } of heredocs.splice(0)) {
        while (j < s.length) {
          const nl = s.indexOf('\n', j);
          const line = s.slice(j, nl < 0 ? s.length : nl);
          j = nl < 0 ? s.length : nl + 1;
          if ((strip ? line.replace(/^\t+/, '') : line) === delim) break;
        }
      }
      i = j - 1;
    } else if (code && c === ')' && cases > 0 && depth === 1) continue;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return i;
  }
  return s.length;
}

function closeDouble(s: string, i: number): number {
  for (; i < s.length && s[i] !== '"'; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '$' && (s[i + 1] === '(' || s[i + 1] === '{')) i = closeParen(s, i + 2, s[i + 1], s[i + 1] === '(' ? ')' : '}');
    else if (s[i] === '`') i = closeBacktick(s, i + 1);
  }
  return i;
}

function closeBacktick(s: string, i: number): number {
  for (; i < s.length && s[i] !== '`'; i++) if (s[i] === '\\') i++;
  return i;
}

function closeAnsi(s: string, i: number): number {
  for (; i < s.length && s[i] !== "'"; i++) if (s[i] === '\\') i++;
  return i;
}

/** Scripts that $(…), `…`, $((…)), $[…] and ${…} inside a text would run, read as if the text were code. */
export function substitutionsIn(text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '`') {
      let j = i + 1;
      let body = '';
      for (; j < text.length && text[j] !== '`'; j++) body += text[j] === '\\' && j + 1 < text.length ? text[++j] : text[j];
      found.push(body);
      i = j;
    } else if (c === '$' && (text[i + 1] === '(' || text[i + 1] === '{' || text[i + 1] === '[')) {
      const open = text[i + 1]!;
      const close = closeParen(text, i + 2, open, open === '(' ? ')' : open === '{' ? '}' : ']');
      const body = text.slice(i + 2, close);
      // a script found is read in full later (its own substitutions with it); arithmetic and ${…} are searched here
      if (open === '(' && !(body.startsWith('(') && closeParen(text, i + 3) + 1 === close)) found.push(body);
      else if (open === '{' && /^[\s|]/.test(body)) found.push(body.slice(1));
      else found.push(...substitutionsIn(body));
      i = close;
    }
  }
  return found;
}
