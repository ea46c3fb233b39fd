// Decides allow / ask / deny for an argv. The argv is expanded into every program it would run:
// shells given a script (sh -c, bash -lc, a script on stdin), eval, and wrappers (env, sudo, nice,
// timeout, xargs, find -exec, busybox …) are looked through, and program names are compared by
// basename, so `/usr/bin/rm`, `'r''m'`, `\rm` and `sh -c "x; rm …"` all meet the rule for rm.
// Each program found is matched on its own; the strictest decision wins. A rule that misses still
// leaves the sandbox's isolation in place: policy narrows what agents do, it is not the wall.
import { ACTION_RANK, type CommandRule, type PolicyAction } from '../../../shared/types/policy.js';
import { parseScript, MAX_DEPTH, type SimpleCommand } from './shell-parse.js';
import { globToRegExp } from './glob.js';

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ash', 'ksh', 'mksh', 'yash', 'posh', 'rbash', 'fish']);

/** Wrappers that run their arguments as a command: how many option words take a value, and what to skip. */
interface Wrapper {
  /** Options that take a separate value. */
  valued?: RegExp;
  /** Positional words before the command (timeout's duration, taskset's mask, flock's file). */
  positional?: number;
  /** Leading NAME=value words are skipped (env). */
  assignments?: boolean;
}
const WRAPPERS: Record<string, Wrapper> = {
  env: { valued: /^-(u|C|S|-unset|-chdir|-split-string)$/, assignments: true },
  sudo: { valued: /^-(u|g|C|h|p|r|t|U|D|R|T|-user|-group|-host|-prompt|-chdir|-role|-type)$/ },
  doas: { valued: /^-(u|C)$/ },
  nice: { valued: /^-(n|-adjustment)$/ },
  ionice: { valued: /^-(c|n|p|P|u|-class|-classdata)$/ },
  nohup: {},
  setsid: {},
  stdbuf: { valued: /^-(i|o|e)$/ },
  timeout: { valued: /^-(s|k|-signal|-kill-after)$/, positional: 1 },
  taskset: { positional: 1 },
  chrt: { positional: 1 },
  flock: { valued: /^-(w|E|-timeout|-conflict-exit-code)$/, positional: 1 },
  time: { valued: /^-(f|o|-format|-output)$/ },
  command: {},
  builtin: {},
  exec: { valued: /^-a$/ },
  xargs: { valued: /^-(I|L|n|P|s|d|E|a|-max-args|-max-procs|-delimiter|-arg-file|-replace|-max-lines|-eof)$/ },
  unbuffer: {},
  chroot: { positional: 1 },
  su: { valued: /^-(s|g|G|-shell|-group)$/ },
  runuser: { valued: /^-(u|g|G|s|-user|-group|-shell)$/ },
  watch: { valued: /^-(n|d|-interval|-differences)$/ },
  strace: { valued: /^-(e|o|p|s|u|E)$/ },
  ltrace: { valued: /^-(e|o|p|s|u)$/ },
  catchsegv: {},
  'run-parts': {},
};

export function programName(word: string): string {
  const base = word.replace(/\/+$/, '').split('/').pop() ?? word;
  return base === '' ? word : base;
}

export interface ExpandedCommand {
  program: string;
  argv: string[];
  dynamic: boolean;
}

/** Every program an exec would run, as far as can be seen before it runs. */
export function expandCommand(argv: string[], stdin?: string): ExpandedCommand[] {
  const out: ExpandedCommand[] = [];
  visit({ argv, dynamic: false }, stdin, 0, out);
  return out;
}

function visit(cmd: SimpleCommand, stdin: string | undefined, depth: number, out: ExpandedCommand[]): void {
  if (cmd.argv.length === 0) return;
  const program = programName(cmd.argv[0]!);
  out.push({ program, argv: [program, ...cmd.argv.slice(1)], dynamic: cmd.dynamic || program === '' });
  if (depth > MAX_DEPTH) {
    out.push({ program: '<nested too deep>', argv: cmd.argv, dynamic: true });
    return;
  }
  const args = cmd.argv.slice(1);
  const script = (text: string) => {
    for (const inner of parseScript(text, depth + 1)) visit(inner, undefined, depth + 1, out);
  };
  if (program === 'busybox' || program === 'toybox') {
    if (args.length) visit({ argv: args, dynamic: false }, stdin, depth + 1, out);
    return;
  }
  if (SHELLS.has(program)) {
    const c = shellScript(args);
    if (c.script !== undefined) script(c.script);
    else if (c.readsStdin && stdin !== undefined) script(stdin);
    return;
  }
  if (program === 'eval') {
    script(args.join(' '));
    return;
  }
  if (program === 'find') {
    for (let i = 0; i < args.length; i++) {
      if (/^-(exec|execdir|ok|okdir)$/.test(args[i]!)) {
        const rest: string[] = [];
        for (i++; i < args.length && args[i] !== ';' && args[i] !== '+'; i++) rest.push(args[i]!);
        if (rest.length) visit({ argv: rest, dynamic: false }, undefined, depth + 1, out);
      }
    }
    return;
  }
  const wrapper = WRAPPERS[program];
  if (!wrapper) return;
  let i = 0;
  let positional = wrapper.positional ?? 0;
  while (i < args.length) {
    const a = args[i]!;
    if (a === '--') {
      i++;
      break;
    }
    if (program === 'env' && /^(-S|--split-string)/.test(a)) {
      // env -S "prog args": the string is split into a command line
      const text = a.length > 2 && !a.startsWith('--') ? a.slice(2) : a.includes('=') ? a.slice(a.indexOf('=') + 1) : (args[i + 1] ?? '');
      script(text);
      return;
    }
    if ((program === 'su' || program === 'runuser') && (a === '-c' || a === '--command')) {
      script(args[i + 1] ?? '');
      return;
    }
    if (a.startsWith('-') && a.length > 1) {
      i += wrapper.valued?.test(a) ? 2 : 1;
      continue;
    }
    if (wrapper.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) {
      i++;
      continue;
    }
    if (positional > 0) {
      positional--;
      i++;
      continue;
    }
    break;
  }
  const rest = args.slice(i);
  if (rest.length === 0) return;
  if (program === 'watch' || program === 'su') script(rest.join(' '));
  else visit({ argv: rest, dynamic: false }, program === 'xargs' ? undefined : stdin, depth + 1, out);
}

/** What a shell invocation runs: the -c script, or its stdin when it is given no script file. */
function shellScript(args: string[]): { script?: string; readsStdin: boolean } {
  let wantsC = false;
  let readsStdin = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      if (wantsC) return { script: args[i + 1] ?? '', readsStdin: false };
      return { readsStdin: args[i + 1] === undefined };
    }
    if (/^[-+][A-Za-z]+$/.test(a)) {
      if (a.startsWith('-') && a.includes('c')) wantsC = true;
      if (/^[-+]o$/.test(a)) i++; // -o option takes a name
      continue;
    }
    if (a.startsWith('--')) continue; // --login, --norc …
    if (wantsC) return { script: a, readsStdin: false };
    readsStdin = false; // a script file: its contents are not visible here
    break;
  }
  return { readsStdin };
}

/** One program of a command that needs a person's approval, and what approving it covers. */
export interface CommandAsk {
  /** For the person: the command as it would run, and the rule that asks. */
  text: string;
  /**
   * What "approve for the rest of the run" stores: the rule and the program, and the whole argv
   * when the rule names arguments (approving `git push origin main` is not approving `git push -f`);
   * a dynamic command is only ever the very same command.
   */
  key: string;
}

export interface CommandDecision {
  action: PolicyAction;
  /** The rule or default that decided, as text. */
  source: string;
  reason: string;
  /** The program that decided (the strictest one). */
  program: string | null;
  programs: string[];
  /** Every program whose decision is ask (when the whole decision is ask, all of these need approval). */
  asks: CommandAsk[];
}

export interface CommandPolicy {
  default: PolicyAction;
  dynamic: PolicyAction;
  rules: CommandRule[];
}

const compiled = new WeakMap<CommandRule, { command: RegExp[]; args: RegExp[] | null }>();
function compile(rule: CommandRule) {
  let c = compiled.get(rule);
  if (!c) {
    c = { command: rule.command.map((g) => globToRegExp(g, false)), args: rule.args ? rule.args.map((g) => globToRegExp(g, false)) : null };
    compiled.set(rule, c);
  }
  return c;
}

export function ruleText(rule: CommandRule): string {
  return `${rule.action} ${rule.command.join('|')}${rule.args ? ` [${rule.args.join('|')}]` : ''}`;
}

/** A word as a shell would need it written: plain when safe, else single-quoted. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_/.,:=@%+^-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function decideCommand(policy: CommandPolicy, argv: string[], stdin?: string): CommandDecision {
  const expanded = expandCommand(argv, stdin);
  let best: Omit<CommandDecision, 'asks'> | null = null;
  const asks = new Map<string, CommandAsk>();
  const programs = expanded.map((e) => e.program);
  const consider = (d: Omit<CommandDecision, 'asks' | 'programs'>, cmd: { argv: string[] }, withArgs: boolean) => {
    if (d.action === 'ask') {
      const key = `${d.source}\0${d.program ?? ''}${withArgs ? `\0${JSON.stringify(cmd.argv)}` : ''}`;
      asks.set(key, { key, text: `${cmd.argv.map(shellQuote).join(' ')}  (${d.source === 'default' || d.source === 'dynamic' ? d.source : `rule: ${d.source}`})` });
    }
    if (!best || ACTION_RANK[d.action] > ACTION_RANK[best.action]) best = { ...d, programs };
  };
  for (const cmd of expanded) {
    if (cmd.dynamic) {
      consider({ action: policy.dynamic, source: 'dynamic', reason: `the program in "${cmd.argv.join(' ').slice(0, 120)}" is only known at run time, so policy cannot check it`, program: cmd.program }, cmd, true);
      continue;
    }
    let matched = false;
    for (const rule of policy.rules) {
      const c = compile(rule);
      if (!c.command.some((re) => re.test(cmd.program))) continue;
      if (c.args && !cmd.argv.slice(1).some((a) => c.args!.some((re) => re.test(a)))) continue;
      matched = true;
      consider({ action: rule.action, source: ruleText(rule), reason: rule.reason ?? `${cmd.program}: rule "${ruleText(rule)}"`, program: cmd.program }, cmd, c.args !== null);
    }
    if (!matched) consider({ action: policy.default, source: 'default', reason: `${cmd.program}: no rule matches; the default is ${policy.default}`, program: cmd.program }, cmd, false);
  }
  const decided: Omit<CommandDecision, 'asks'> = best ?? { action: policy.default, source: 'default', reason: 'empty command', program: null, programs };
  return { ...decided, asks: decided.action === 'ask' ? [...asks.values()] : [] };
}
