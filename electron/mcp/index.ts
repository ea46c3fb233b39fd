// `warden mcp`: serves MCP over stdio. With a running Warden (server.json in WARDEN_HOME) and an agent
// token (WARDEN_TOKEN), every tool call goes to that server; otherwise the engine and gateway run in
// this process, on the same ledger. stdout is the protocol: nothing else may be written there.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { WardenError } from '../../shared/errors.js';
import { AGENT_NAME_PATTERN } from '../../shared/types/api.js';
import { ensureWardenHome } from '../engine/paths.js';
import { PodmanEngine } from '../engine/podman/podman-engine.js';
import { WardenEngine } from '../engine/engine.js';
import { openAuditLedger } from '../engine/open-ledger.js';
import { ContextAuditSink } from '../engine/gateway/audit-context.js';
import { Gateway } from '../engine/gateway/gateway.js';
import { loadPolicy } from '../engine/gateway/policy-load.js';
import { findServer } from '../server/server-file.js';
import { WardenClient } from '../server/client.js';
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
    api = remoteAgentApi(new WardenClient(running.url, env.WARDEN_TOKEN, options.runKey ?? null));
  } else {
    const { policy, source } = loadPolicy(home);
    const podman = await PodmanEngine.open({ home, detachedService: true, serviceIdleSeconds: 300 });
    const ledger = openAuditLedger(home);
    const audit = new ContextAuditSink(ledger);
    const engine = new WardenEngine(podman, audit, { actor: 'user' });
    const gateway = new Gateway(engine, audit, { policy, policySource: source });
    api = localAgentApi(gateway, { agent: options.agent, runKey: options.runKey ?? null });
    close = () => {
      gateway.close();
      engine.close();
      ledger.close();
    };
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
