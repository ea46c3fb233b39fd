// Where a CLI command is carried out: through the running Warden of this WARDEN_HOME (the app or
// `warden serve`, found by server.json) when there is one, so the UI sees the command and one
// process owns the engine; otherwise with the engine in this process. Either way the same ledger.
// Each CLI invocation is its own run on the server (X-Warden-Run), recorded under the user.
import { randomBytes } from 'node:crypto';
import type { ExecRequest, ExecResult } from '../../shared/types/exec.js';
import type { SandboxInfo } from '../../shared/types/sandbox.js';
import { parseRequest } from '../../shared/contracts/validate.js';
import type { AgentRequest } from '../../shared/contracts/agent-routes.js';
import type { Attestation } from '../../shared/types/attestation.js';
import type { ExecHandlers } from '../engine/podman/exec-session.js';
import { ensureWardenHome } from '../engine/paths.js';
import { AgentClient, type AgentVerbs } from '../server/client.js';
import { findServer } from '../server/server-file.js';
import { TokenStore } from '../server/tokens.js';
import type { WardenEngine } from '../engine/engine.js';

// The engine (dockerode, the ledger) loads only when a command runs it here, never on the server path.
const withEngine = async <T>(body: (engine: WardenEngine) => Promise<T>): Promise<T> => (await import('./open-engine.js')).withEngine(body);

export type LifecycleVerb = 'start' | 'stop' | 'restart' | 'pause' | 'resume';

/** The verbs the agent API carries, each exactly as the route map has it. */
const ROUTE_VERBS = [
  'sandbox.create',
  'sandbox.list',
  'sandbox.inspect',
  'sandbox.diff',
  'sandbox.start',
  'sandbox.stop',
  'sandbox.ttl',
  'sandbox.destroy',
  'sandbox.snapshot',
  'sandbox.snapshots',
  'snapshot.remove',
  'sandbox.reset',
  'sandbox.fork',
] as const;
type RouteVerb = (typeof ROUTE_VERBS)[number];

/** The longest exec the server's policy allows is what a user's untimed `warden exec` asks for. */
const UNTIMED_EXEC_MS = 24 * 3600 * 1000;

export type CliBackend = AgentVerbs<RouteVerb> & {
  readonly via: 'server' | 'in-process';
  /** Not in the agent API (a person's own verbs): with a server up, the engine in this process (same ledger). */
  lifecycle(verb: Exclude<LifecycleVerb, 'start' | 'stop'>, ref: string): Promise<SandboxInfo>;
  /** Through the exec route, but as another user only in this process. */
  exec(ref: string, request: ExecRequest, sinks: ExecHandlers): Promise<ExecResult>;
  attest(ref: string, deep: boolean): Promise<Attestation>;
};

/** A lifecycle verb by name: start and stop are routes of the agent API, the others the user's own. */
export function lifecycle(b: CliBackend, verb: LifecycleVerb, ref: string): Promise<SandboxInfo> {
  const request: AgentRequest<'sandbox.start'> = { params: { id: ref } };
  if (verb === 'start') return b['sandbox.start'](request);
  if (verb === 'stop') return b['sandbox.stop'](request);
  return b.lifecycle(verb, ref);
}

/** WARDEN_LOCAL=1 keeps a command in this process even when a server is up. */
export async function withBackend<T>(body: (backend: CliBackend) => Promise<T>): Promise<T> {
  const home = ensureWardenHome();
  const server = process.env.WARDEN_LOCAL === '1' ? null : await findServer(home);
  if (server)
    return body(
      serverBackend(new AgentClient(server.url, new TokenStore(home).userToken(), `cli-${process.pid}-${randomBytes(3).toString('hex')}`)),
    );
  return withEngine(async (engine) => {
    await engine.reapExpired();
    return body(inProcess(engine));
  });
}

function serverBackend(client: AgentClient): CliBackend {
  // The HTTP API has what agents may do; pause, resume, restart and exec as another user are the
  // user's own, so those open the engine here (still the same ledger).
  const local = <T>(fn: (b: CliBackend) => Promise<T>) => withEngine(async (engine) => fn(inProcess(engine)));
  return {
    via: 'server',
    ...client.verbs(ROUTE_VERBS),
    lifecycle: (verb, ref) => local((b) => b.lifecycle(verb, ref)),
    // Not an agent's call: a person's, through the engine here (same ledger).
    attest: (ref, deep) => local((b) => b.attest(ref, deep)),
    exec: async (ref, request, sinks) => {
      if (request.user !== undefined) return local((b) => b.exec(ref, request, sinks));
      const write = async (handler: ExecHandlers['onStdout'], chunk: Buffer) => {
        if (handler?.(chunk) === false) await sinks.drain?.();
      };
      const r = await client.exec(
        ref,
        {
          cmd: request.cmd,
          timeoutMs: request.timeoutMs ?? UNTIMED_EXEC_MS,
          ...(request.cwd !== undefined ? { cwd: request.cwd } : {}),
          ...(request.env !== undefined ? { env: request.env } : {}),
          ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
        },
        async (e) => {
          if (e.type === 'stdout' || e.type === 'stderr')
            await write(
              e.type === 'stdout' ? sinks.onStdout : sinks.onStderr,
              Buffer.from(e.data, e.encoding === 'base64' ? 'base64' : 'utf8'),
            );
        },
        { collect: false },
      );
      const { code: exitCode, durationMs, timedOut, truncated, stdoutBytes, stderrBytes, oomKilled } = r;
      return { exitCode, durationMs, timedOut, truncated, stdoutBytes, stderrBytes, oomKilled };
    },
  };
}

function inProcess(engine: WardenEngine): CliBackend {
  return {
    via: 'in-process',
    'sandbox.create': (request) => engine['sandbox.create'](parseRequest('sandbox.create', request?.body)),
    'sandbox.list': () => engine['sandbox.list'](),
    'sandbox.inspect': ({ params }) => engine['sandbox.inspect']({ ref: params.id }),
    'sandbox.diff': async ({ params }) => engine.changes.diff('sandbox', (await engine.resolveSandbox(params.id)).id),
    'sandbox.start': ({ params }) => engine['sandbox.start']({ ref: params.id }),
    'sandbox.stop': ({ params }) => engine['sandbox.stop']({ ref: params.id }),
    'sandbox.ttl': ({ params, body }) => engine.ttl.set(params.id, body.ttlSeconds),
    'sandbox.destroy': ({ params }) => engine['sandbox.destroy']({ ref: params.id }),
    'sandbox.snapshot': ({ params, body }) => engine.snapshots.snapshot(params.id, body?.tag),
    'sandbox.snapshots': ({ params }) => engine.snapshots.list(params.id),
    'snapshot.remove': ({ params }) => engine.snapshots.remove(params.id, params.tag),
    'sandbox.reset': ({ params, body }) => engine.snapshots.reset(params.id, body.to),
    'sandbox.fork': ({ params, body }) => engine.snapshots.fork(params.id, body.from, body.name),
    lifecycle: (verb, ref) => engine[`sandbox.${verb}`]({ ref }),
    exec: (ref, request, sinks) => engine.execStream(ref, request, sinks),
    attest: (ref, deep) => engine['sandbox.attest']({ ref, deep }),
  };
}
