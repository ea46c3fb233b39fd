// `warden token …`: the token store loads only when one of them runs.
import type { Command } from 'commander';
import { ensureWardenHome } from '../../engine/paths.js';
import { printJson, runCommand } from '../output.js';

async function tokenStore() {
  const { TokenStore } = await import('../../server/tokens.js');
  return new TokenStore(ensureWardenHome());
}

export function registerToken(program: Command): void {
  const token = program.command('token').description('agent tokens for the HTTP API and MCP (stored hashed, 0600, in WARDEN_HOME)');
  token
    .command('create')
    .description('create a token for an agent; it is shown once')
    .requiredOption('--agent <name>', 'agent name (letters, digits, _ . -)')
    .option('--json', 'print {"agent","token"} as JSON')
    .action((o: { agent: string; json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { info, token: value } = (await tokenStore()).create(o.agent);
        if (o.json) printJson({ agent: info.agent, token: value, id: info.id });
        else process.stdout.write(`${value}\n`);
        if (!o.json) process.stderr.write(`token ${info.id} for agent ${info.agent}: keep it secret; it is not shown again\n`);
      }),
    );
  token
    .command('ls')
    .description('list tokens (never their values)')
    .option('--json', 'print as JSON')
    .action((o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const list = (await tokenStore()).list();
        if (o.json) return printJson(list);
        for (const t of list)
          process.stdout.write(
            `${t.id}  ${t.role.padEnd(5)}  ${t.agent.padEnd(20)}  ${t.revokedAt ? `revoked ${t.revokedAt}` : `created ${t.createdAt}`}\n`,
          );
      }),
    );
  token
    .command('revoke')
    .description('revoke a token by id, or every token of an agent')
    .argument('<id-or-agent>')
    .option('--json', 'print as JSON')
    .action((what: string, o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const n = (await tokenStore()).revoke(what);
        if (o.json) printJson({ revoked: n });
        else process.stdout.write(`revoked ${n} token${n === 1 ? '' : 's'}\n`);
      }),
    );
}
