// The E2B control plane's verbs after create, over the gateway's lifecycle verbs (policy, the run,
// the ledger): setTimeout (a new TTL from now, within the policy's max TTL for agents), pause (Podman
// pause; 409 when already paused, which the SDK answers `false`), and connect, which resumes a
// paused sandbox and only ever extends its TTL, as E2B's does.
import type { FastifyInstance } from 'fastify';
import type { E2bSandbox } from '../../../shared/types/e2b.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { Gateway } from '../../engine/gateway/gateway.js';
import { WardenError } from '../../../shared/errors.js';
import { contextOf, type E2bAccess } from './e2b-access.js';
import { E2bUnsupported } from './e2b-errors.js';
import type { E2bRouteHandler, E2bRouteRegistrar } from './e2b-rest.js';

export interface E2bLifecycleDeps {
  gateway: Gateway;
  access: E2bAccess;
  register: E2bRouteRegistrar;
  answer: (info: SandboxInfo, apiKey: string) => E2bSandbox;
}

export function registerE2bLifecycle(app: FastifyInstance, { gateway, access, register, answer }: E2bLifecycleDeps): void {
  register(app, 'sandbox.timeout', async ({ params, body }, req) => {
    const ctx = contextOf(access.apiCaller(req.headers).caller);
    await gateway.lifecycleVerbs.setTtl(ctx, params.sandboxID, (body as { timeout: number }).timeout, 'set');
    return undefined;
  });

  register(app, 'sandbox.pause', async ({ params, body }, req) => {
    const ctx = contextOf(access.apiCaller(req.headers).caller);
    if ((body as { memory?: boolean | null }).memory === false)
      throw new E2bUnsupported('pausing without memory (keepMemory: false)', 'Warden pauses by freezing the processes, memory kept');
    const info = await gateway.inspectSandbox(ctx, params.sandboxID);
    if (info.state === 'paused') throw new WardenError('E_CONFLICT', `sandbox ${info.id} is already paused`);
    await gateway.lifecycleVerbs.pause(ctx, info.id);
    return undefined;
  });

  const connect: E2bRouteHandler = async ({ params, body }, req) => {
    const { caller, apiKey } = access.apiCaller(req.headers);
    const ctx = contextOf(caller);
    const { timeout, memory } = body as { timeout?: number; memory?: boolean };
    let info = await gateway.inspectSandbox(ctx, params.sandboxID);
    if (info.state === 'paused') {
      if (memory === false) throw new E2bUnsupported('resuming by a reboot (onResume: "reboot")', 'Warden resumes with memory kept');
      info = await gateway.lifecycleVerbs.resume(ctx, info.id);
    }
    if (info.state !== 'running') throw new E2bUnsupported(`connecting to a sandbox that is ${info.state}`, 'start it in Warden first');
    if (timeout !== undefined && timeout > 0) info = await gateway.lifecycleVerbs.setTtl(ctx, info.id, timeout, 'extend');
    return answer(info, apiKey);
  };
  register(app, 'sandbox.connect', connect);
}
