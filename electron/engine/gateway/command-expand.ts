// Expands an exec's argv into every program it would run, as far as can be known before it runs:
// shells given a script (-c, a here-string or here-doc, the exec's own stdin), eval, trap, mapfile -C,
// and wrappers (env, sudo, nice, timeout, xargs, find -exec, busybox …) are looked through. Where
// the program cannot be known — a shell reading a pipe or a file, a word only known at run time where
// a program or option would be, an option we do not know, xargs appending words a shell would read —
// the entry is marked dynamic, with why. Program names compare by basename.
import { parseScript, codeInAssignment, MAX_DEPTH, type StdinSource } from './shell-parse.js';
import { tokenize } from './shell-lex.js';
import { ownEntry, readOptions, WRAPPERS, SHELL_OPTIONS, SHELLS, SETARCH_ALIASES } from './command-options.js';

export interface ExpandedCommand {
  program: string;
  argv: string[];
  dynamic: boolean;
  /** Why the program is only known at run time. */
  why?: string;
}

type Stdin = { kind: 'none' } | { kind: 'text'; text: string } | { kind: 'unknown' };
interface Ctx {
  stdin: Stdin;
  /** Words only known at run time will be appended to the command (xargs, parallel). */
  appended: boolean;
  /** A text replaced at run time wherever it appears (xargs -I, find -exec {}). */
  placeholder?: string;
}

/** find tests and actions whose next word is their operand. */
const FIND_OPERAND =
  /^-(i?name|i?path|i?wholename|i?regex|i?lname|x?type|newer|newer[amcBt][amcBt]|anewer|cnewer|user|group|uid|gid|perm|size|[amc]time|[amc]min|used|links|inum|samefile|maxdepth|mindepth|fstype|context|printf|fprint0?|fprintf|fls|regextype|files0-from)$/;
const STDIN_FILE = /^(-|\/dev\/stdin|\/dev\/fd\/0|\/proc\/(self|thread-self|\d+)\/fd\/0)$/;
/** Files that are another descriptor (a here-string, a pipe) or a socket: what they hold is only known at run time. */
const DESCRIPTOR_FILE = /^\/(dev\/fd\/|proc\/[^/]+\/fd\/|dev\/std(out|err)$|dev\/(tcp|udp)\/)/;
/** env takes any NAME=value before the command, whatever the name holds. */
const ASSIGNMENT = /^[^=]+=/;

export function programName(word: string): string {
  const base = word.replace(/\/+$/, '').split('/').pop() ?? word;
  return base === '' ? word : base;
}

/** An exec's stdin that its client streams while it runs (E2B's sendStdin, a PTY's input): only known at run time. */
export const STREAMED_STDIN = Symbol('stdin streamed while the command runs');
export type ExecStdin = string | typeof STREAMED_STDIN;

/** Every program an exec would run, as far as can be seen before it runs; `env` is the exec's environment. */
export function expandCommand(argv: string[], stdin?: ExecStdin, env?: Record<string, string>): ExpandedCommand[] {
  const out: ExpandedCommand[] = [];
  const top: Stdin =
    stdin === undefined ? { kind: 'none' } : stdin === STREAMED_STDIN ? { kind: 'unknown' } : { kind: 'text', text: stdin };
  const ctx: Ctx = { stdin: top, appended: false };
  const program = programName(argv[0] ?? '');
  for (const [name, value] of Object.entries(env ?? {})) {
    // the environment binds names (exported functions) and sets variables the shell runs, like env NAME=value
    const code = codeInAssignment(`${name}=${value}`, false);
    const why = name.startsWith('BASH_FUNC_') ? 'an exported function binds a command name at run time' : code.why;
    if (why) out.push({ program, argv: [...argv], dynamic: true, why: `${name} in the environment: ${why}` });
    else if (code.script !== undefined)
      for (const c of parseScript(code.script, 1))
        visit(c.argv, c.unknown, c.dynamic, { ...ctx, stdin: resolve(c.stdin, ctx.stdin) }, 1, out);
  }
  visit(
    argv,
    argv.map(() => false),
    undefined,
    ctx,
    0,
    out,
  );
  return out;
}

function resolve(source: StdinSource, outer: Stdin): Stdin {
  if (source === 'inherit') return outer;
  if (source === 'unknown') return { kind: 'unknown' };
  return { kind: 'text', text: source.text };
}

function visit(argv: string[], unknown: boolean[], why: string | undefined, ctx: Ctx, depth: number, out: ExpandedCommand[]): void {
  if (argv.length === 0) return;
  const ph = ctx.placeholder;
  if (ph !== undefined) unknown = unknown.map((u, i) => u || argv[i]!.includes(ph));
  const program = programName(argv[0]!);
  const entry: ExpandedCommand = { program, argv: [program, ...argv.slice(1)], dynamic: false };
  const dyn = (reason: string): void => void out.push({ ...entry, dynamic: true, why: reason });
  if (why) return dyn(why);
  if (unknown[0]) return dyn(`the program "${argv[0]}" is only known at run time`);
  if (program === '') return dyn('the program name is empty');
  out.push(entry);
  if (depth > MAX_DEPTH) return dyn('commands are nested too deep to read');
  const args = argv.slice(1);
  const au = unknown.slice(1);
  const run = (words: string[], flags: boolean[], next: Ctx = ctx) => visit(words, flags, undefined, next, depth + 1, out);
  const script = (text: string, textUnknown: boolean, appended = false): void => {
    if (textUnknown) return dyn(`the script ${program} runs is only known at run time`);
    for (const c of parseScript(text, depth + 1))
      visit(c.argv, c.unknown, c.dynamic, { stdin: resolve(c.stdin, ctx.stdin), appended }, depth + 1, out);
  };
  const readStdin = (): void => {
    if (ctx.appended) return dyn(`${program} is given words only known at run time`);
    if (ctx.stdin.kind === 'text') script(ctx.stdin.text, false);
    else if (ctx.stdin.kind === 'unknown') dyn(`${program} reads its script from a pipe or file, only known at run time`);
  };
  const nothing = () => (ctx.appended ? dyn(`${program} is given words only known at run time`) : undefined);

  if (program === 'busybox' || program === 'toybox') return args.length ? run(args, au) : nothing();
  if (program === 'eval')
    return ctx.appended || au.some(Boolean)
      ? dyn('eval of words only known at run time')
      : script(args.slice(args[0] === '--' ? 1 : 0).join(' '), false);
  if (Object.hasOwn(SHELLS, program)) return shell();
  if (program === 'trap') {
    const r = readOptions({ flags: 'lp' }, args, au);
    if (r.unreadable) return dyn(r.unreadable);
    if (r.next >= args.length) return nothing();
    return args[r.next] === '-' ? undefined : script(args[r.next]!, au[r.next]!);
  }
  if (program === 'mapfile' || program === 'readarray' || program === 'compgen' || program === 'complete') {
    // mapfile -C and compgen/complete -C run the command they are given
    const spec =
      program === 'mapfile' || program === 'readarray'
        ? { flags: 't', valued: 'dnOsuCc' }
        : { flags: 'abcdefgjksuvprDEI', valued: 'oAGWFCXPS' };
    const r = readOptions(spec, args, au);
    if (r.unreadable) return dyn(r.unreadable);
    for (const o of r.options) if (o.name === 'C') script(o.value ?? '', o.valueUnknown ?? false);
    return;
  }
  if (program === 'source' || program === '.') {
    const at = args[0] === '--' ? 1 : 0;
    if (at >= args.length) return nothing();
    if (au[at]) return dyn(`the file ${program} reads is only known at run time`);
    if (DESCRIPTOR_FILE.test(args[at]!) && !STDIN_FILE.test(args[at]!)) return dyn(`${program} reads ${args[at]}, only known at run time`);
    return STDIN_FILE.test(args[at]!) ? readStdin() : undefined;
  }
  if (program === 'find') return find();
  if (program === 'parallel') {
    const end = args.findIndex((a) => a.startsWith(':::'));
    if (end <= 0 || args[0]!.startsWith('-') || args.slice(0, end).some((a, k) => au[k] || a.includes('{')))
      return dyn('parallel builds its commands at run time');
    return script(args.slice(0, end).join(' '), false, true);
  }
  const wrapper = SETARCH_ALIASES.has(program) ? { ...WRAPPERS.setarch!, positional: 0 } : ownEntry(WRAPPERS, program);
  if (!wrapper) return;
  let words = args;
  let flags = au;
  if (program === 'setarch') {
    // setarch ARCH [options] [program]: the architecture comes before the options
    if (flags[0]) return dyn(`"${words[0]}" is only known at run time, so which word is the program is too`);
    return visit(['linux64', ...words.slice(1)], [false, ...flags.slice(1)], undefined, ctx, depth, out);
  }
  let r = readOptions(wrapper, words, flags);
  while (!r.unreadable && program === 'env' && r.options.at(-1)?.name.match(/^(S|split-string)$/)) {
    // env -S "prog args": the string is split into words that take the place of the option
    const o = r.options.at(-1)!;
    const split = o.valueUnknown || /[\\$]/.test(o.value ?? '') ? null : tokenize(o.value ?? '');
    if (!split || split.some((t) => t.op !== undefined || t.dynamic)) return dyn('env -S splits a string only known at run time');
    words = [...split.map((t) => (t.op === undefined ? t.text : '')), ...words.slice(r.next)];
    flags = [...split.map(() => false), ...flags.slice(r.next)];
    r = readOptions(wrapper, words, flags);
  }
  if (r.unreadable) return dyn(`${program}: ${r.unreadable}`);
  const has = (...names: string[]) => r.options.find((o) => names.includes(o.name));
  let i = r.next;
  if (program === 'env' && words[i] === '-') i++;
  if (program === 'su' || program === 'runuser' || program === 'script') {
    // they run -c through a shell, and su/runuser take options after the user too: look at every word
    for (let k = 0; k < words.length; k++) {
      const m =
        /^--(?:command|session-command)(?:=(.*))?$/s.exec(words[k]!) ??
        (program === 'script' ? null : /^-[lmpfPT]*c(.*)$/s.exec(words[k]!));
      if (!m) continue;
      if (flags[k]) return dyn(`"${words[k]}" is only known at run time`);
      return m[1] ? script(m[1], false) : script(words[k + 1] ?? '', flags[k + 1] ?? false);
    }
    const c = has('c');
    if (c) return script(c.value ?? '', c.valueUnknown ?? false);
    if (program === 'script') return dyn('script runs an interactive shell');
    if (program === 'runuser' && has('u', 'user') && i < words.length) return run(words.slice(i), flags.slice(i));
    if (flags.some(Boolean)) return dyn(`${program} is given words only known at run time`);
    if (words[i] === '-') i++;
    return words.length - i <= 1 ? readStdin() : undefined; // su [user]: a shell reading stdin
  }
  while (wrapper.assignments && i < words.length && ASSIGNMENT.test(words[i]!)) {
    if (words[i]!.startsWith('BASH_FUNC_')) return dyn('an exported function binds a command name at run time');
    const code = codeInAssignment(words[i]!, flags[i]!);
    if (code.why) return dyn(code.why);
    if (code.script !== undefined) script(code.script, false);
    i++;
  }
  for (let p = program === 'runcon' && r.options.length ? 0 : (wrapper.positional ?? 0); p > 0 && i < words.length; p--, i++) {
    if (flags[i]) return dyn(`"${words[i]}" is only known at run time, so which word is the program is too`);
  }
  if (program === 'flock' && /^(-c|--command)$/.test(words[i] ?? '')) return script(words[i + 1] ?? '', flags[i + 1] ?? false);
  const rest = words.slice(i);
  const restFlags = flags.slice(i);
  if (rest.length === 0) {
    if (wrapper.alone === 'shell' || (wrapper.alone === 'shell-if-s' && has('s', 'i', 'shell', 'login'))) return readStdin();
    return nothing();
  }
  if ((program === 'watch' && !has('x', 'exec')) || program === 'sg') {
    // these hand their words to sh -c (sg group [-c] command)
    const from = program === 'sg' && rest[0] === '-c' ? 1 : 0;
    return script(rest.slice(from).join(' '), restFlags.some(Boolean));
  }
  if (program === 'xargs') {
    const replace = has('I', 'i', 'replace');
    return run(rest, restFlags, { stdin: { kind: 'unknown' }, appended: true, ...(replace ? { placeholder: replace.value || '{}' } : {}) });
  }
  return run(rest, restFlags);

  function shell(): void {
    const family = SHELLS[program]!;
    if (family === 'other') return dyn(`policy reads sh and bash scripts, not ${program}'s`);
    const r = readOptions(SHELL_OPTIONS[family]!, args, au);
    if (r.unreadable) return dyn(`${program}: ${r.unreadable}`);
    if (r.options.some((o) => o.name === 'i')) return dyn(`an interactive ${program} runs PROMPT_COMMAND, prompts and startup files`);
    let next = r.next;
    if (args[next] === '-') next++; // a lone - ends the options
    if (r.options.some((o) => o.name === 'c')) return next < args.length ? script(args[next]!, au[next]!) : nothing();
    if (r.options.some((o) => o.name === 's') || next >= args.length) return readStdin();
    if (au[next]) return dyn(`the script file ${program} runs is only known at run time`);
    if (STDIN_FILE.test(args[next]!)) return readStdin();
    if (DESCRIPTOR_FILE.test(args[next]!)) dyn(`${program} reads its script from ${args[next]}, only known at run time`);
  }

  function find(): void {
    if (ctx.appended) return dyn('find is given words only known at run time, which may hold -exec');
    for (let k = 0; k < args.length; k++) {
      if (FIND_OPERAND.test(args[k]!)) {
        k += args[k] === '-fprintf' ? 2 : 1; // the test's operand (-name "$x") cannot become -exec
        continue;
      }
      if (au[k]) return dyn(`find is given "${args[k]}", only known at run time, where -exec could be`);
      if (!/^-(exec|execdir|ok|okdir)$/.test(args[k]!)) continue;
      const start = k + 1;
      for (k = start; k < args.length && args[k] !== ';' && args[k] !== '+'; k++);
      run(args.slice(start, k), au.slice(start, k), { stdin: ctx.stdin, appended: false, placeholder: '{}' });
    }
  }
}
