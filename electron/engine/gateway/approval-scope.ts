// What a person is asked to approve for an exec, and what that approval covers. The prompt shows the
// whole command (and its stdin, which a shell reading it runs) and every program that needs the
// approval; "approve for the rest of the run" covers exactly those programs (with their arguments
// where the asking rule names arguments), so anything else in a later command still asks.
import type { Policy } from '../../../shared/types/policy.js';
import type { PolicyVerdict } from './call-spec.js';
import { STREAMED_STDIN, type ExecStdin } from './command-expand.js';
import { decideCommand, shellQuote } from './command-policy.js';
import { GatewayDenial } from './denial.js';

/** The most a prompt shows. A command that needs approval and is longer is refused, never shown cut. */
export const MAX_APPROVAL_TEXT = 32 * 1024;

/** The command as a person reads it: argv quoted as a shell would need it, then stdin if any. */
export function commandSummary(argv: string[], stdin?: ExecStdin): string {
  const line = `exec ${argv.map(shellQuote).join(' ')}`;
  if (stdin === STREAMED_STDIN) return `${line}\n--- stdin: streamed by the client while it runs ---`;
  return stdin === undefined ? line : `${line}\n--- stdin (${Buffer.byteLength(stdin)} bytes) ---\n${stdin}`;
}

export function execVerdict(commands: Policy['commands'], argv: string[], stdin?: ExecStdin, env?: Record<string, string>): PolicyVerdict {
  const d = decideCommand(commands, argv, stdin, env);
  const summary = commandSummary(argv, stdin);
  const verdict: PolicyVerdict = {
    action: d.action,
    source: d.source,
    reason: d.reason,
    scope: `exec:${d.program ?? ''}`,
    summary,
    ...(d.action === 'deny' ? { denyReason: 'policy' as const } : {}),
    ...(d.snapshot ? { snapshot: true } : {}),
  };
  if (d.action !== 'ask') return verdict;
  if (summary.length > MAX_APPROVAL_TEXT) {
    throw new GatewayDenial(
      'policy',
      `the command needs a person's approval (${d.reason}) but is ${summary.length} characters long, more than the ${MAX_APPROVAL_TEXT} an approval prompt shows whole`,
      'send a shorter command (write a long script to a file with the file API and run that)',
    );
  }
  return { ...verdict, scopes: d.asks.map((a) => a.key), programs: d.asks.map((a) => a.text) };
}
