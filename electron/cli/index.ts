// `warden …`: a thin client of the engine. Each command group lives in commands/ and loads what its
// action needs (engine, server, ledger, validation) only when that action runs: `--help` and a
// command that talks to a running Warden stay as light as Node itself.
import { Command, CommanderError } from 'commander';
import { registerDoctor } from './commands/doctor.js';
import { registerSandbox } from './commands/sandbox.js';
import { registerExec } from './commands/exec.js';
import { registerAudit } from './commands/audit.js';
import { registerServe } from './commands/serve.js';
import { registerToken } from './commands/token.js';
import { registerRun } from './commands/run.js';
import { registerMcp } from './commands/mcp.js';
import { registerE2b } from './commands/e2b.js';
import { printError } from './output.js';

const program = new Command('warden')
  .description('Warden: sandboxes for AI agents, with guardrails and a verifiable audit ledger')
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  // Commander exits 1 on a usage error by itself; the README promises 2 for bad input, so it throws
  // to us instead (subcommands inherit this, as they are added below).
  .exitOverride()
  .configureOutput({
    outputError: (text, write) => write(text.replace(/^error: /, 'warden: ')),
  });

registerDoctor(program);
registerSandbox(program);
registerExec(program);
registerAudit(program);
registerServe(program);
registerToken(program);
registerRun(program);
registerMcp(program);
registerE2b(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Commander has already printed its line (help, version, or what was wrong with the words).
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else {
    printError({ code: 'E_INTERNAL', message: err instanceof Error ? err.message : String(err) }, false);
    process.exitCode = 1;
  }
}
