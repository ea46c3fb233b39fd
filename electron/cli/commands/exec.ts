// `warden exec`: validation and the backend load when it runs, not with every other command.
import type { Command } from 'commander';
import { WardenError } from '../../../shared/errors.js';
import { runCommand } from '../output.js';
import { collectPairs, pairsToRecord, parseNumberOption } from '../parse-options.js';

interface ExecOptions {
  timeout?: string;
  cwd?: string;
  env?: string[];
  user?: string;
}

/** Our stdout and stderr as exec handlers: a full pipe pauses the sandbox's output until it drains. */
function terminalSinks() {
  const pending = new Map<NodeJS.WriteStream, Promise<void>>();
  const sink = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
    if (stream.write(chunk)) return true;
    // One wait per full stream, however many writes found it full.
    if (!pending.has(stream)) {
      pending.set(stream, new Promise<void>((resolve) => stream.once('drain', () => (pending.delete(stream), resolve()))));
    }
    return false;
  };
  return {
    onStdout: sink(process.stdout),
    onStderr: sink(process.stderr),
    drain: async () => {
      await Promise.all([...pending.values()]);
    },
  };
}

export function registerExec(program: Command): void {
  program
    .command('exec')
    .description('run a command in a sandbox; exits with its exit code (124 on timeout)')
    .argument('<name>', 'sandbox name or id')
    .argument('<cmd...>', 'command and arguments (put them after --)')
    .option('--timeout <seconds>', 'kill the command and everything it started after this long')
    .option('--cwd <dir>', 'working directory inside the sandbox')
    .option('--env <KEY=VALUE>', 'environment variable (repeatable)', collectPairs)
    .option('--user <user>', 'user inside the sandbox')
    .action((name: string, cmd: string[], o: ExecOptions) =>
      runCommand(false, async () => {
        const seconds = parseNumberOption('timeout', o.timeout);
        if (seconds !== undefined && seconds <= 0) throw new WardenError('E_BAD_INPUT', '--timeout must be more than 0 seconds');
        const [{ parseRequest }, { withBackend }] = await Promise.all([
          import('../../../shared/contracts/validate.js'),
          import('../backend.js'),
        ]);
        const { ref, request } = parseRequest('exec.run', {
          ref: name,
          request: {
            cmd,
            cwd: o.cwd,
            env: pairsToRecord('env', o.env),
            user: o.user,
            timeoutMs: seconds === undefined ? undefined : Math.round(seconds * 1000),
          },
        });
        const sinks = terminalSinks();
        const result = await withBackend((b) => b.exec(ref, request, sinks));
        await sinks.drain();
        if (result.timedOut) process.stderr.write(`warden: timed out after ${seconds}s; the command and its children were killed\n`);
        if (result.oomKilled)
          process.stderr.write(
            'warden: the command was killed for running out of memory (the sandbox memory limit); create the sandbox with a larger --memory\n',
          );
        if (result.truncated) process.stderr.write('warden: output was cut at the output limit\n');
        return result.exitCode;
      }),
    );
}
