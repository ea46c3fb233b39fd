// Where a CLI command is carried out: through the running Warden of this WARDEN_HOME (the app or
// `warden serve`, found by server.json) when there is one, so the UI sees the command and one
// process owns the engine; otherwise with the engine in this process. Either way the same ledger.
// Each CLI invocation is its own run on the server (X-Warden-Run), recorded under the user.
import { randomBytes } from 'node:crypto';
import type { ExecRequest, ExecResult } from '../../shared/types/exec.js';
import type { SandboxInfo, SandboxSpec } from '../../shared/types/sandbox.js';
import type { Attestation } from '../../shared/types/attestation.js';
import type { ExecHandlers } from '../engine/podman/exec-session.js';
import { ensureWardenHome } from '../engine/paths.js';
import { WardenClient } from '../server/client.js';
import { findServer } from '../server/server-file.js';
import { TokenStore } from '../server/tokens.js';
import type { WardenEngine } from '../engine/engine.js';
import { withEngine } from './open-engine.js';

export type LifecycleVerb = 'start' | 'stop' | 'restart' | 'pause' | 'resume';

/** The longest exec the server's policy allows is what a user's untimed `warden exec` asks for. */
const UNTIMED_EXEC_MS = 24 * 3600 * 1000;

export interface CliBackend {
  readonly via: 'server' | 'in-process';
  create(spec: SandboxSpec): Promise<SandboxInfo>;
  list(): Promise<SandboxInfo[]>;
  inspect(ref: string): Promise<SandboxInfo>;
  lifecycle(verb: LifecycleVerb, ref: string): Promise<SandboxInfo>;
  destroy(ref: string): Promise<{ id: string; name: string }>;
  exec(ref: string, request: ExecRequest, sinks: ExecHandlers): Promise<ExecResult>;
  attest(ref: string, deep: boolean): Promise<Attestation>;
}

/** WARDEN_LOCAL=1 keeps a command in this process even when a server is up. */
export async function withBackend<T>(body: (backend: CliBackend) => Promise<T>): Promise<T> {
  const home = ensureWardenHome();
  const server = process.env.WARDEN_LOCAL === '1' ? null : await findServer(home);
  if (server) return body(serverBackend(new WardenClient(server.url, new TokenStore(home).userToken(), `cli-${process.pid}-${randomBytes(3).toString('hex')}`)));
  return withEngine(async (engine) => {
    await engine.reapExpired();
    return body(inProcess(engine));
  });
}

function serverBackend(client: WardenClient): CliBackend {
  // The HTTP API has what agents may do; pause, resume, restart and exec as another user are the
  // user's own, so those open the engine here (still the same ledger).
  const local = <T>(fn: (b: CliBackend) => Promise<T>) => withEngine(async (engine) => fn(inProcess(engine)));
  return {
    via: 'server',
    create: (spec) => client.createSandbox(spec),
    list: () => client.listSandboxes(),
    inspect: (ref) => client.call<SandboxInfo>('GET', `/v1/sandboxes/${encodeURIComponent(ref)}`),
    lifecycle: (verb, ref) =>
      verb === 'start' || verb === 'stop' ? client.call<SandboxInfo>('POST', `/v1/sandboxes/${encodeURIComponent(ref)}/${verb}`) : local((b) => b.lifecycle(verb, ref)),
    destroy: (ref) => client.destroySandbox(ref),
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
          if (e.type === 'stdout' || e.type === 'stderr') await write(e.type === 'stdout' ? sinks.onStdout : sinks.onStderr, Buffer.from(e.data, e.encoding === 'base64' ? 'base64' : 'utf8'));
        },
        { collect: false },
      );
      return { exitCode: r.code, durationMs: r.durationMs, timedOut: r.timedOut, truncated: r.truncated, stdoutBytes: r.stdoutBytes, stderrBytes: r.stderrBytes, oomKilled: r.oomKilled };
    },
  };
}

function inProcess(engine: WardenEngine): CliBackend {
  return {
    via: 'in-process',
    create: (spec) => engine['sandbox.create'](spec),
    list: () => engine['sandbox.list'](),
    inspect: (ref) => engine['sandbox.inspect']({ ref }),
    lifecycle: (verb, ref) => engine[`sandbox.${verb}`]({ ref }),
    destroy: (ref) => engine['sandbox.destroy']({ ref }),
    exec: (ref, request, sinks) => engine.execStream(ref, request, sinks),
    attest: (ref, deep) => engine['sandbox.attest']({ ref, deep }),
  };
}
