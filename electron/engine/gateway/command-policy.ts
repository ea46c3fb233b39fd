// Decides allow / ask / deny for an argv. The argv is expanded (command-expand.ts) into every
// program it would run, shells, eval and wrappers looked through, and program names compared by
// basename, so `/usr/bin/rm`, `'r''m'`, `\rm` and `sh -c "x; rm …"` all meet the rule for rm; what
// cannot be known before it runs is `dynamic`. Each program found is matched on its own; the
// strictest decision wins. A rule guards what an agent asks for: interpreters, script files and copied
// binaries run what it never sees, so the sandbox's isolation is the wall, not policy. A
// snapshot-then-allow rule allows, and asks for a snapshot of the sandbox before the command runs.
import { RULE_RANK, type CommandRule, type CommandRuleAction, type PolicyAction } from '../../../shared/types/policy.js';
import { expandCommand, type ExecStdin, type ExpandedCommand } from './command-expand.js';
import { globToRegExp } from './glob.js';
import { withScanBudget } from './shell-scan.js';

/** Characters the reader may step over for one decision (tens of ms): more is dynamic. */
const SCAN_BUDGET = 5_000_000;

export { expandCommand, programName, type ExpandedCommand } from './command-expand.js';

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
  /**
   * A snapshot-then-allow rule matched one of its programs: unless the command is denied, the sandbox
   * is snapshotted before it runs (after an approval, when it also needs one).
   */
  snapshot: boolean;
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

export function decideCommand(policy: CommandPolicy, argv: string[], stdin?: ExecStdin, env?: Record<string, string>): CommandDecision {
  let expanded: ExpandedCommand[];
  try {
    expanded = withScanBudget(SCAN_BUDGET, () => expandCommand(argv, stdin, env));
  } catch (err) {
    // too deep or too long to read, or a reader bug: never let the command through, never a stack trace
    const why = err instanceof RangeError ? 'the command is too complex to read' : 'policy could not read the command';
    expanded = [{ program: argv[0] ?? '', argv, dynamic: true, why }];
  }
  type Considered = Omit<CommandDecision, 'asks' | 'programs' | 'snapshot' | 'action'> & { action: CommandRuleAction };
  let best: (Considered & { programs: string[] }) | null = null;
  let snapshot = false;
  const asks = new Map<string, CommandAsk>();
  const programs = expanded.map((e) => e.program);
  const consider = (d: Considered, cmd: { argv: string[] }, withArgs: boolean) => {
    if (d.action === 'snapshot-then-allow') snapshot = true;
    if (d.action === 'ask') {
      const key = `${d.source}\0${d.program ?? ''}${withArgs ? `\0${JSON.stringify(cmd.argv)}` : ''}`;
      asks.set(key, {
        key,
        text: `${cmd.argv.map(shellQuote).join(' ')}  (${d.source === 'default' || d.source === 'dynamic' ? d.source : `rule: ${d.source}`})`,
      });
    }
    if (!best || RULE_RANK[d.action] > RULE_RANK[best.action]) best = { ...d, programs };
  };
  for (const cmd of expanded) {
    if (cmd.dynamic) {
      consider(
        {
          action: policy.dynamic,
          source: 'dynamic',
          reason: `policy cannot check "${cmd.argv.join(' ').slice(0, 120)}": ${cmd.why ?? 'its program is only known at run time'}`,
          program: cmd.program,
        },
        cmd,
        true,
      );
      continue;
    }
    let matched = false;
    for (const rule of policy.rules) {
      const c = compile(rule);
      if (!c.command.some((re) => re.test(cmd.program))) continue;
      if (c.args && !cmd.argv.slice(1).some((a) => c.args!.some((re) => re.test(a)))) continue;
      matched = true;
      consider(
        {
          action: rule.action,
          source: ruleText(rule),
          reason: rule.reason ?? `${cmd.program}: rule "${ruleText(rule)}"`,
          program: cmd.program,
        },
        cmd,
        c.args !== null,
      );
    }
    if (!matched)
      consider(
        {
          action: policy.default,
          source: 'default',
          reason: `${cmd.program}: no rule matches; the default is ${policy.default}`,
          program: cmd.program,
        },
        cmd,
        false,
      );
  }
  const decided: Considered & { programs: string[] } = best ?? {
    action: policy.default,
    source: 'default',
    reason: 'empty command',
    program: null,
    programs,
  };
  const action: PolicyAction = decided.action === 'snapshot-then-allow' ? 'allow' : decided.action;
  return { ...decided, action, asks: action === 'ask' ? [...asks.values()] : [], snapshot: snapshot && action !== 'deny' };
}
