// `warden mcp`: serves MCP over stdio. With a running Warden (server.json in WARDEN_HOME) and an agent
// token (WARDEN_TOKEN), every tool call goes to that server; otherwise the engine and gateway run in
// this process, on the same ledger. stdout is the protocol: nothing else may be written there.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { WardenError } from '../../shared/errors.js';
import { AGENT_NAME_PATTERN } from '../../shared/types/api.js';
import { ensureWardenHome } from '../engine/paths.js';
import { DETACHED_SERVICE, openWarden } from '../engine/open-warden.js';
import { findServer } from '../server/server-file.js';
import { AgentClient } from '../server/client.js';
import { localAgentApi, remoteAgentApi, type AgentApi } from './agent-api.js';
import { createMcpServer } from './mcp-server.js';

export interface McpOptions {
  agent: string;
  runKey?: string;
  env?: NodeJS.ProcessEnv;
}

export async function runMcp(options: McpOptions): Promise<void> {
  const env = options.env ?? process.env;
  if (!AGENT_NAME_PATTERN.test(options.agent)) throw new WardenError('E_BAD_INPUT', `"${options.agent}" is not an agent name`);
  const home = ensureWardenHome(env);
  const running = await findServer(home);
  let api: AgentApi;
  let close = () => undefined as void;
  if (running && env.WARDEN_TOKEN) {
    api = remoteAgentApi(new AgentClient(running.url, env.WARDEN_TOKEN, options.runKey ?? null));
  } else {
    const warden = await openWarden(home, { podmanOptions: DETACHED_SERVICE });
    api = localAgentApi(warden.gateway, { agent: options.agent, runKey: options.runKey ?? null });
    close = () => warden.close();
  }
  const server = createMcpServer(api);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  close();
}
