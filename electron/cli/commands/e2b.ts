// `warden e2b env`: the three variables that point the official e2b SDK at the Warden serving this
// WARDEN_HOME, as `export` lines for eval. The key is a new token of the agent (tokens are stored
// hashed, so an old one cannot be shown again); with no server running it says what to start.
import type { Command } from 'commander';
import { WardenError } from '../../../shared/errors.js';
import { E2B_PREFIX } from '../../../shared/contracts/e2b-routes.js';
import { AgentNameSchema } from '../../../shared/types/api.js';
import { parseWith } from '../../../shared/contracts/parse.js';
import { ensureWardenHome } from '../../engine/paths.js';
import { findServer } from '../../server/server-file.js';
import { printJson, runCommand } from '../output.js';

const DEFAULT_AGENT = 'e2b';

/** Single-quoted for a POSIX shell (the values are URLs and base64url tokens, but quoting costs nothing). */
const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

export function registerE2b(program: Command): void {
  const e2b = program.command('e2b').description('use Warden from code written for the e2b SDK');
  e2b
    .command('env')
    .description('print E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY for the running Warden (eval "$(warden e2b env)")')
    .option('--agent <name>', `the agent the SDK acts as (default: ${DEFAULT_AGENT}); a new token of it is created`)
    .option('--json', 'print the three variables as a JSON object')
    .action((o: { agent?: string; json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const agent = parseWith(AgentNameSchema, o.agent ?? DEFAULT_AGENT, 'agent');
        const home = ensureWardenHome();
        const server = await findServer(home);
        if (!server)
          throw new WardenError(
            'E_NOT_FOUND',
            `no Warden is serving this WARDEN_HOME (${home})`,
            'start one with `warden serve` (in another terminal, or the desktop app), then run `warden e2b env` again',
          );
        const { TokenStore } = await import('../../server/tokens.js');
        const { info, token } = new TokenStore(home).create(agent);
        const url = `${server.url}${E2B_PREFIX}`;
        const vars = { E2B_API_URL: url, E2B_SANDBOX_URL: url, E2B_API_KEY: token };
        if (o.json) printJson(vars);
        else for (const [k, v] of Object.entries(vars)) process.stdout.write(`export ${k}=${quote(v)}\n`);
        process.stderr.write(
          `warden: E2B_API_KEY is token ${info.id} of agent ${agent} (revoke it with \`warden token revoke ${info.id}\`)\n`,
        );
      }),
    );
}
