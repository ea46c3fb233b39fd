// `warden serve`: the server (fastify, the engine, the ledger) loads only when it runs.
import type { Command } from 'commander';
import { WardenError } from '../../../shared/errors.js';
import { findServer } from '../../server/server-file.js';
import { ensureWardenHome } from '../../engine/paths.js';
import { runCommand } from '../output.js';
import { parseIntegerOption } from '../parse-options.js';
import { onceStopped, settlesWithin, stopBoundMs } from '../stop-signals.js';
import { LABEL } from '../../engine/podman/labels.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the agent HTTP API (and the web UI) on 127.0.0.1 until interrupted')
    .option('--port <port>', 'port (default: any free one)')
    .action((o: { port?: string }) =>
      runCommand(false, async () => {
        const port = parseIntegerOption('port', o.port);
        if (port !== undefined && (port < 0 || port > 65535)) throw new WardenError('E_BAD_INPUT', '--port must be 0–65535');
        const home = ensureWardenHome();
        const other = await findServer(home);
        if (other)
          throw new WardenError(
            'E_CONFLICT',
            `Warden already serves this home at ${other.url} (pid ${other.pid})`,
            'stop it first, or use another WARDEN_HOME',
          );
        const bound = stopBoundMs(process.env); // a bad value is refused before anything starts
        // Before anything starts: a signal during start-up (the pool begins filling there) is a stop too.
        const stopped = onceStopped((signal) =>
          process.stderr.write(`warden: ${signal} again: still stopping (removing the warm pool); kill -9 stops at once and leaves it\n`),
        );
        // stdout's first line is the URL (scripts read it); the control panel's login link goes to stderr.
        process.env.WARDEN_WEB_SHELL_QUIET = '1';
        const [{ startServer }, { webShellOf }] = await Promise.all([
          import('../../server/index.js'),
          import('../../server/web-shell/index.js'),
        ]);
        const server = await startServer({ home, ...(port !== undefined ? { port } : {}) });
        process.stdout.write(`${server.url}\n`);
        process.stderr.write(`warden: serving ${server.url} (127.0.0.1 only); policy ${server.gateway.policySource}; Ctrl-C to stop\n`);
        const login = webShellOf(server.app)?.loginUrl();
        if (login) process.stderr.write(`warden: control panel at ${login}  (one-time login link)\n`);
        const signal = await stopped;
        process.stderr.write(`warden: ${signal}: stopping: the API closes, then the warm pool's sandboxes are removed\n`);
        const closing = server.close();
        if (await settlesWithin(closing, bound)) {
          await closing; // a close that failed says why (runCommand)
          process.stderr.write('warden: stopped\n');
          // Nothing of serve's own is left; a Podman request an agent's call made, which a hung
          // Podman never answers, would still keep the process alive (red team, stop 23).
          process.exit(0);
        }
        // A wedged Podman (a remove that never answers) must not keep serve from ending: what it
        // could not remove is left as a kill -9 leaves it, and said so; the ledger is closed with its
        // checkpoint and a Podman service serve started is stopped all the same (it is likely what is wedged).
        server.abandon();
        process.stderr.write(
          `warden: stopping took more than ${bound / 1000} s (Podman is not answering?); stopped anyway and left the warm pool's sandboxes ` +
            `(\`podman ps -a --filter label=${LABEL.pool}\`): the next \`warden serve\` on this home adopts or removes them\n`,
        );
        process.exit(1);
      }),
    );
}
