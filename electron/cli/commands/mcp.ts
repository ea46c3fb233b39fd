import type { Command } from 'commander';
import { runCommand } from '../output.js';
import { runMcp } from '../../mcp/index.js';

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('serve the Warden tools over MCP (stdio) for a coding agent; uses a running Warden when WARDEN_TOKEN is set')
    .option('--agent <name>', 'agent name for the record (in-process mode; with WARDEN_TOKEN the token names the agent)', 'mcp')
    .option('--run <key>', 'group all calls into this run (X-Warden-Run)')
    .action((o: { agent: string; run?: string }) => runCommand(false, () => runMcp({ agent: o.agent, ...(o.run ? { runKey: o.run } : {}) })));
}
