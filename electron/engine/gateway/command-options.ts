// How the programs policy looks through read their options: which letters take a value (glued,
// `-n5`, or the next word), which long options exist, and where the command they run begins. An
// option not listed here makes the command dynamic: not knowing how many words it takes, policy
// cannot know which word is the program (`env -iSid`, `bash -O extglob -c id` were ways past it).

export interface OptionSpec {
  /** Short letters that take no value. */
  flags?: string;
  /** Short letters that take a value: the rest of the cluster, or the next word. */
  valued?: string;
  /** Short letters whose value can only be glued (xargs -i[R], -e[E], -l[N]). */
  glued?: string;
  /** Long options: 'flag', 'value' (=v or the next word) or 'optional' (only =v). */
  long?: Record<string, 'flag' | 'value' | 'optional'>;
  /** Accepts -<number> (nice -10). */
  numeric?: boolean;
  /** Takes `+x` clusters as well as `-x` (sh +e, bash +O name). */
  plus?: boolean;
  /** Options after which reading stops, so the caller can act on them (env -S splits its value into words). */
  stop?: string[];
}

export interface Option {
  name: string;
  value?: string;
  /** The value is only known at run time. */
  valueUnknown?: boolean;
}

/**
 * A table's entry for a name the agent chose (a program, an option): only the table's own, so
 * `constructor` or `toString` does not find Object.prototype's and pass for a wrapper or an option.
 */
export function ownEntry<T>(table: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

export interface ReadOptions {
  options: Option[];
  /** Index of the first word after the options. */
  next: number;
  /** Why the options cannot be read: an unknown option, or a word only known at run time. */
  unreadable?: string;
}

export function readOptions(spec: OptionSpec, args: string[], unknown: boolean[], from = 0): ReadOptions {
  const options: Option[] = [];
  let i = from;
  const fail = (why: string): ReadOptions => ({ options, next: i, unreadable: why });
  while (i < args.length) {
    const a = args[i]!;
    if (unknown[i]) return fail(`"${a}" is only known at run time, so which word is the program is too`);
    if (a === '--') return { options, next: i + 1 };
    if (!(a.startsWith('-') || (spec.plus && a.startsWith('+'))) || a.length < 2) break;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = a.slice(2, eq < 0 ? undefined : eq);
      const kind = spec.long ? ownEntry(spec.long, name) : undefined;
      if (!kind) return fail(`unknown option ${a}`);
      if (eq >= 0) options.push({ name, value: a.slice(eq + 1) });
      else if (kind === 'value') {
        options.push({ name, value: args[i + 1] ?? '', valueUnknown: unknown[i + 1] ?? false });
        i++;
      } else options.push({ name });
      i++;
      if (spec.stop?.includes(name)) return { options, next: i };
      continue;
    }
    if (spec.numeric && /^-\d+$/.test(a)) {
      options.push({ name: 'n', value: a.slice(1) });
      i++;
      continue;
    }
    const sign = a[0] === '+' ? '+' : '';
    let consumed = 1;
    for (let k = 1; k < a.length; k++) {
      const c = a[k]!;
      if (spec.flags?.includes(c)) options.push({ name: sign + c });
      else if (spec.glued?.includes(c)) {
        options.push({ name: sign + c, value: a.slice(k + 1) });
        break;
      } else if (spec.valued?.includes(c)) {
        if (k + 1 < a.length) options.push({ name: sign + c, value: a.slice(k + 1) });
        else {
          options.push({ name: sign + c, value: args[i + 1] ?? '', valueUnknown: unknown[i + 1] ?? false });
          consumed = 2;
        }
        if (spec.stop?.includes(c)) return { options, next: i + consumed };
        break;
      } else return fail(`unknown option -${c} in ${a}`);
    }
    i += consumed;
  }
  return { options, next: i };
}

const flag = 'flag' as const;
const value = 'value' as const;
const optional = 'optional' as const;

/** A program that runs the rest of its words as a command. */
export interface Wrapper extends OptionSpec {
  /** Words before the command (timeout's duration, taskset's mask, flock's file, chroot's root). */
  positional?: number;
  /** Leading NAME=value words are not the command (env). */
  assignments?: boolean;
  /** With no command it runs a shell that reads stdin (chroot, unshare); for sudo/doas only with -s/-i. */
  alone?: 'shell' | 'shell-if-s';
}

// One program per row, so the tables read as tables (and a row diffs as one line): Prettier would put every
// option on its own line and bury them, so these literals are kept out of it.
// prettier-ignore
export const WRAPPERS: Record<string, Wrapper> = {
  env: { flags: '0iv', valued: 'uCSP', assignments: true, stop: ['S', 'split-string'], long: { 'ignore-environment': flag, null: flag, unset: value, chdir: value, 'split-string': value, 'block-signal': optional, 'default-signal': optional, 'ignore-signal': optional, 'list-signal-handling': flag, debug: flag } },
  sudo: { flags: 'AbeEHiKklnPSsVv', valued: 'CDghprRTtUu', alone: 'shell-if-s', long: { user: value, group: value, login: flag, shell: flag, 'preserve-env': optional, chdir: value, 'non-interactive': flag, background: flag, stdin: flag, 'set-home': flag, prompt: value, 'close-from': value, 'other-user': value, host: value, role: value, type: value, 'command-timeout': value, askpass: flag, 'preserve-groups': flag, 'reset-timestamp': flag } },
  doas: { flags: 'nsL', valued: 'uC', alone: 'shell-if-s' },
  nice: { valued: 'n', numeric: true, long: { adjustment: value } },
  ionice: { flags: 't', valued: 'cnpPu', long: { class: value, classdata: value, pid: value, pgid: value, uid: value, ignore: flag } },
  nohup: {},
  setsid: { flags: 'cfw', long: { ctty: flag, fork: flag, wait: flag } },
  stdbuf: { valued: 'ioe', long: { input: value, output: value, error: value } },
  timeout: { flags: 'v', valued: 'sk', positional: 1, long: { signal: value, 'kill-after': value, foreground: flag, 'preserve-status': flag, verbose: flag } },
  taskset: { flags: 'acp', positional: 1, long: { 'all-tasks': flag, cpu: flag, pid: flag } },
  chrt: { flags: 'abdfiomprRv', valued: 'TPD', positional: 1 },
  flock: { flags: 'sexnuoFv', valued: 'wE', positional: 1, long: { shared: flag, exclusive: flag, nonblock: flag, nb: flag, unlock: flag, close: flag, 'no-fork': flag, verbose: flag, timeout: value, wait: value, 'conflict-exit-code': value } },
  time: { flags: 'apqv', valued: 'fo', long: { format: value, output: value, append: flag, portability: flag, verbose: flag, quiet: flag } },
  command: { flags: 'pvV' },
  builtin: {},
  exec: { flags: 'cl', valued: 'a' },
  xargs: { flags: '0prtxo', valued: 'adEILnPs', glued: 'eil', long: { null: flag, interactive: flag, 'no-run-if-empty': flag, verbose: flag, exit: flag, 'open-tty': flag, 'show-limits': flag, 'arg-file': value, delimiter: value, 'max-args': value, 'max-procs': value, 'max-chars': value, 'process-slot-var': value, eof: optional, replace: optional, 'max-lines': optional } },
  unbuffer: { flags: 'p' },
  strace: { flags: 'cCdDfFhikqrtTvVwxyzZn', valued: 'abeEIoOpPsSuUX' },
  ltrace: { flags: 'bcCfhiLrStTV', valued: 'aAeEDlnopsuwx' },
  catchsegv: {},
  chroot: { positional: 1, alone: 'shell', long: { userspec: value, groups: value, 'skip-chdir': flag } },
  unshare: { flags: 'muinpUCTfrc', valued: 'RwSG', alone: 'shell', long: { mount: optional, uts: optional, ipc: optional, net: optional, pid: optional, user: optional, cgroup: optional, time: optional, fork: flag, 'map-root-user': flag, 'map-current-user': flag, 'kill-child': optional, 'mount-proc': optional, propagation: value, setgroups: value, root: value, wd: value, setuid: value, setgid: value } },
  nsenter: { flags: 'aFmuinpUCTrwZe', valued: 'tSGRW', alone: 'shell', long: { all: flag, target: value, 'no-fork': flag, 'preserve-credentials': flag } },
  watch: { flags: 'bcdegptwxrhv', valued: 'nq', long: { interval: value, differences: optional, beep: flag, color: flag, 'no-color': flag, errexit: flag, chgexit: flag, precise: flag, 'no-title': flag, 'no-wrap': flag, exec: flag, equexit: value, 'no-rerun': flag } },
  script: { flags: 'aefqkV', valued: 'cEOIBTm', long: { append: flag, command: value, echo: value, 'return': flag, flush: flag, force: flag, quiet: flag, 'log-io': value, 'log-in': value, 'log-out': value, 'log-timing': value, 'logging-format': value, 'output-limit': value } },
  setpriv: { flags: 'dVh', long: { dump: flag, nnp: flag, 'no-new-privs': flag, 'inh-caps': value, 'ambient-caps': value, 'bounding-set': value, 'keep-groups': flag, 'clear-groups': flag, groups: value, 'init-groups': flag, regid: value, reuid: value, rgid: value, ruid: value, egid: value, euid: value, securebits: value, pdeathsig: value, 'selinux-label': value, 'apparmor-profile': value, 'landlock-access': value, 'landlock-rule': value, 'reset-env': flag } },
  prlimit: { flags: 'hV', valued: 'op', glued: 'cdefilmnqrstuvxy', long: { core: optional, data: optional, nice: optional, fsize: optional, sigpending: optional, memlock: optional, rss: optional, nofile: optional, msgqueue: optional, rtprio: optional, stack: optional, cpu: optional, nproc: optional, as: optional, locks: optional, rttime: optional, pid: value, output: value, noheadings: flag, raw: flag, verbose: flag } },
  setarch: { flags: 'v3BFILRSTXZ', positional: 1, alone: 'shell', long: { 'uname-2.6': flag, verbose: flag, 'addr-no-randomize': flag, 'fdpic-funcptrs': flag, 'mmap-page-zero': flag, 'addr-compat-layout': flag, 'read-implies-exec': flag, '32bit': flag, 'short-inode': flag, 'whole-seconds': flag, 'sticky-timeouts': flag, '3gb': flag, '4gb': flag, 'show': optional } },
  runcon: { flags: 'c', valued: 'urtl', positional: 1, long: { compute: flag, user: value, role: value, type: value, range: value } },
  sg: { positional: 1 },
  su: { flags: 'lmpfPT', valued: 'cgGsw', long: { command: value, 'session-command': value, shell: value, login: flag, 'preserve-environment': flag, group: value, 'supp-group': value, pty: flag, 'whitelist-environment': value, fast: flag } },
  runuser: { flags: 'lmpfPT', valued: 'cgGsuw', long: { command: value, 'session-command': value, shell: value, login: flag, 'preserve-environment': flag, group: value, 'supp-group': value, user: value, pty: flag, 'whitelist-environment': value, fast: flag } },
};

/** Options of the shells policy reads scripts from; -c takes the script from the first operand. */
// prettier-ignore
export const SHELL_OPTIONS: Record<string, OptionSpec> = {
  bash: { flags: 'abcefhiklmnprstuvxBCDEHPT', valued: 'oO', plus: true, long: { debugger: flag, 'dump-po-strings': flag, 'dump-strings': flag, help: flag, login: flag, noediting: flag, noprofile: flag, norc: flag, posix: flag, 'pretty-print': flag, protected: flag, restricted: flag, verbose: flag, version: flag, rcfile: value, 'init-file': value } },
  posix: { flags: 'abcCefhilmnprsuvxEIV', valued: 'o', plus: true },
};
/** Names setarch also goes by: they take no architecture word. */
export const SETARCH_ALIASES = new Set(['linux32', 'linux64', 'i386', 'x86_64', 'uname26']);
/** Shells by the grammar policy reads them with; `other` (zsh, fish, ksh: `=cmd`, `noglob`, `${ cmd; }`) is not read. */
// prettier-ignore
export const SHELLS: Record<string, string> = { sh: 'posix', dash: 'posix', ash: 'posix', yash: 'posix', posh: 'posix', bash: 'bash', rbash: 'bash', ksh: 'other', ksh93: 'other', mksh: 'other', zsh: 'other', fish: 'other', tcsh: 'other', csh: 'other' };
