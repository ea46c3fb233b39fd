// `warden mcp`: the MCP SDK and the engine load only when it runs.
import type { Command } from 'commander';
import { runCommand } from '../output.js';

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('serve the Warden tools over MCP (stdio) for a coding agent; uses a running Warden when WARDEN_TOKEN is set')
    .option('--agent <name>', 'agent name for the record (in-process mode; with WARDEN_TOKEN the token names the agent)', 'mcp')
    .option('--run <key>', 'group all calls into this run (X-Warden-Run)')
    .action((o: { agent: string; run?: string }) =>
      runCommand(false, async () => {
        const { runMcp } = await import('../../mcp/index.js');
        return runMcp({ agent: o.agent, ...(o.run ? { runKey: o.run } : {}) });
      }),
    );
}
