// A conservative reader of POSIX/bash shell text: it finds every simple command a script would run,
// so policy can check each one. It does not run or expand anything. Where the program a command runs
// is only known at run time ($CMD, `…`, {a,b}, r?, a name bound by alias/hash/BASH_CMDS), the
// command is marked dynamic, and policy decides what to do with commands it cannot see. It also says
// where each command's stdin comes from, because a shell reading its script from a pipe or a file
// runs what is only known at run time. Anything it misreads errs towards more commands.
import { tokenize, type Word } from './shell-lex.js';

/** Where a command's stdin comes from: the enclosing script's, somewhere unknown, or a known text. */
export type StdinSource = 'inherit' | 'unknown' | { text: string };

export interface SimpleCommand {
  argv: string[];
  /** Per word: its text is only known at run time. */
  unknown: boolean[];
  /** Why the program is only known at run time; undefined when it is known. */
  dynamic?: string;
  stdin: StdinSource;
}

/**
 * Whether a command is `fc` re-running history: with -s, or an editor (-e, FCEDIT) whose lines then
 * run. Only a listing (-l, with -n or -r, and no -s or -e: bash runs `fc -ls` all the same) is not,
 * also behind `builtin` or `command` (stop 25's second red team).
 */
function runsHistory(argv: string[]): boolean {
  let i = 0;
  while (argv[i] === 'builtin' || argv[i] === 'command') {
    for (i++; argv[i]?.startsWith('-') && argv[i] !== '--';) i++;
    if (argv[i] === '--') i++;
  }
  if (argv[i] !== 'fc') return false;
  const options = argv
    .slice(i + 1)
    .filter((a) => /^-[a-zA-Z]+$/.test(a))
    .join('');
  return !options.includes('l') || /[se]/.test(options);
}

const RESERVED = new Set([
  '((…))',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'esac',
  '{',
  '}',
  '!',
  ']]',
  'time',
  'coproc',
  'function',
  'select',
  'for',
  'in',
]);
export const REDIRECT = /^(\d*|&|\{[A-Za-z_][A-Za-z0-9_]*\})(>>?|<<?-?|<<<|<>|>&|<&|>\||&>>?)-?$/;
const STDIN_REDIRECT = /^0?(<|<<-?|<<<|<>|<&)-?$/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
/** Names whose assignment binds a command name at run time (bash's alias and command hash tables, exported functions). */
const BINDS = /^(BASH_ALIASES|BASH_CMDS|BASH_FUNC_[^=]*|aliases|galiases|functions|commands)(\[|\+?=)/;
export const MAX_DEPTH = 8;
/** Reading is synchronous: a longer script is not read (it would hold the event loop), and is dynamic. */
export const MAX_SCRIPT_CHARS = 128 * 1024;
/** Variables a shell runs as code (PROMPT_COMMAND), expands as prompts (PS0–PS4), or sources as a file (BASH_ENV, ENV). */
const CODE_VARIABLE = /^(PROMPT_COMMAND|PS[0-4]|BASH_ENV|ENV)(\[[^\]]*\])?\+?=/;
const STDIN_FILE = /^(-|\/dev\/stdin|\/dev\/fd\/0|\/proc\/(self|thread-self|\d+)\/fd\/0)$/;

/** For NAME=value words that set a variable the shell later runs: the script to check, or why it cannot be. */
export function codeInAssignment(text: string, unknown: boolean): { script?: string; why?: string } {
  const m = CODE_VARIABLE.exec(text);
  if (!m) return {};
  const value = text.slice(m[0].length);
  if (unknown) return { why: `${m[1]} is set to a value only known at run time, which the shell runs` };
  if (m[1] === 'PROMPT_COMMAND') return { script: value };
  if ((m[1] === 'BASH_ENV' || m[1] === 'ENV') && (STDIN_FILE.test(value) || value.includes('(…)')))
    return { why: `${m[1]} makes the shell read a pipe` };
  return {};
}

interface Pending {
  words: Word[];
  stdin?: StdinSource;
  piped: boolean;
  coproc: boolean;
}

/** Every simple command a script would run (including those inside substitutions), in order. */
export function parseScript(script: string, depth = 0): SimpleCommand[] {
  if (depth > MAX_DEPTH)
    return [{ argv: ['<script nested too deep>'], unknown: [true], dynamic: 'the script is nested too deep to read', stdin: 'unknown' }];
  if (script.length > MAX_SCRIPT_CHARS)
    return [
      {
        argv: ['<script too long>'],
        unknown: [true],
        dynamic: `the script is longer than ${MAX_SCRIPT_CHARS} characters, more than policy reads`,
        stdin: 'unknown',
      },
    ];
  const out: SimpleCommand[] = [];
  let plumbing = false; // a pipe or a stdin redirection somewhere: inherited stdin is no longer the script's
  let cur: Pending = { words: [], piped: false, coproc: false };
  let redirect: string | null = null; // the operator whose target comes next
  let casePatterns = false; // between `case … in` / `;;` and the `)` that ends a pattern
  let test = false; // inside [[ … ]]
  const flush = (next: Partial<Pending> = {}) => {
    const { words, stdin, piped, coproc } = cur;
    cur = { words: [], piped: false, coproc: false, ...next };
    let start = 0;
    let why: string | undefined;
    while (start < words.length) {
      const w = words[start]!;
      if (ASSIGNMENT.test(w.text)) {
        if (BINDS.test(w.text)) why = `${w.text.split(/[[=]/)[0]} binds a command name at run time`;
      } else if (!w.quoted && RESERVED.has(w.text)) {
        if (w.text === 'coproc') {
          // coproc [NAME] command: its stdin is a pipe; NAME only comes before a compound command
          plumbing = true;
          cur.coproc = true;
          const after = words[start + 2];
          if (after && !after.quoted && RESERVED.has(after.text)) start++;
        }
        if (w.text === 'time') while (words[start + 1] && /^(-p|--)$/.test(words[start + 1]!.text)) start++;
        if (w.text === 'function') start++;
      } else break;
      start++;
    }
    for (const w of words) {
      const code = codeInAssignment(w.text, w.dynamic);
      if (code.why) why ??= code.why;
      if (code.script !== undefined) out.push(...parseScript(code.script, depth + 1));
    }
    const rest = words.slice(start);
    const coprocHere = coproc || cur.coproc;
    cur.coproc = false;
    if (rest.length === 0) {
      if (why) out.push({ argv: words.map((w) => w.text), unknown: words.map(() => true), dynamic: why, stdin: 'inherit' });
      return;
    }
    const argv = rest.map((w) => w.text);
    const program = argv[0]!;
    if (!why && rest[0]!.dynamic) why = `the program "${program}" is only known at run time`;
    if (!why && rest.some((w) => w.evaluates)) why = '${…@P} runs what the value holds';
    if (!why && rest.some((w) => BINDS.test(w.text))) why = 'it binds a command name at run time';
    if (!why && program === 'alias' && argv.some((a) => a.includes('='))) why = 'alias binds a command name at run time';
    if (!why && program === 'hash' && argv.slice(1).some((a) => /^-[a-z]*p/.test(a))) why = 'hash -p binds a command name at run time';
    if (!why && runsHistory(argv)) why = 'fc runs commands from the history';
    const source: StdinSource = stdin ?? (piped || coprocHere ? 'unknown' : 'inherit');
    out.push({ argv, unknown: rest.map((w) => w.dynamic), ...(why ? { dynamic: why } : {}), stdin: source });
  };
  let caseHeader = 0; // words left of `case WORD in`
  const atStart = () => cur.words.every((w) => !w.quoted && RESERVED.has(w.text));
  for (const token of tokenize(script)) {
    if (token.op !== undefined) {
      if (test || caseHeader > 0) continue;
      if (casePatterns) {
        if (token.op === ')') casePatterns = false;
        continue;
      }
      const piped = token.op === '|' || token.op === '|&';
      if (piped) plumbing = true;
      flush({ piped });
      if (token.op === ';;' || token.op === ';&') casePatterns = true;
      continue;
    }
    const w = token;
    for (const inner of w.inner) {
      for (const c of parseScript(inner.script, depth + 1)) out.push(inner.piped && c.stdin === 'inherit' ? { ...c, stdin: 'unknown' } : c);
    }
    if (test) {
      if (!w.quoted && w.text === ']]') test = false;
      continue;
    }
    if (caseHeader > 0) {
      if (--caseHeader === 0) casePatterns = true;
      continue;
    }
    if (casePatterns) {
      if (!w.quoted && w.text === 'esac') casePatterns = false;
      continue;
    }
    if (redirect !== null) {
      const op = redirect;
      redirect = null;
      if (STDIN_REDIRECT.test(op)) {
        plumbing = true;
        if (op.includes('<<<')) cur.stdin = w.dynamic ? 'unknown' : { text: `${w.text}\n` };
        else if (w.heredoc) cur.stdin = w.heredoc.expands ? 'unknown' : { text: w.heredoc.body };
        else cur.stdin = 'unknown';
      }
      continue;
    }
    if (!w.quoted && REDIRECT.test(w.text)) {
      redirect = w.text;
      continue;
    }
    if (!w.quoted && atStart()) {
      if (w.text === '[[') {
        test = true;
        continue;
      }
      if (w.text === 'case') {
        caseHeader = 2;
        continue;
      }
    }
    cur.words.push(w);
  }
  flush();
  return plumbing ? out.map((c) => (c.stdin === 'inherit' ? { ...c, stdin: 'unknown' } : c)) : out;
}
