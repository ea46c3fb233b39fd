// Who calls the E2B door. The control plane takes a Warden agent token as E2B_API_KEY (X-API-KEY);
// envd calls carry the access token Warden handed out for one sandbox (X-Access-Token) and name that
// sandbox (E2b-Sandbox-Id). An access token is good for its own sandbox only, and only while the
// agent token it was issued to is not revoked (checked on every call). They live in this server's
// memory: after a restart Sandbox.connect() issues a new one. Custom headers are also what keeps a
// browser page from driving these routes: a cross-site form cannot set them.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { WardenError } from '../../../shared/errors.js';
import type { TokenInfo } from '../../../shared/types/api.js';
import type { AgentContext } from '../../engine/gateway/gateway.js';
import type { TokenStore } from '../tokens.js';
import { E2bUnsupported } from './e2b-errors.js';

interface Grant {
  apiKey: string;
  sandboxId: string;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const unauthorized = (what: string) =>
  new WardenError('E_UNAUTHORIZED', `${what} is missing, invalid or revoked`, 'set E2B_API_KEY to a Warden agent token (`warden e2b env`)');

export function contextOf(caller: TokenInfo): AgentContext {
  return { agent: caller.agent, runKey: null, ...(caller.role === 'user' ? { trusted: true } : {}) };
}

export class E2bAccess {
  private readonly grants = new Map<string, Grant>();

  constructor(private readonly tokens: TokenStore) {}

  /** The control plane's caller, from X-API-KEY. */
  apiCaller(headers: IncomingHttpHeaders): { caller: TokenInfo; apiKey: string } {
    const apiKey = header(headers, 'x-api-key');
    const caller = this.tokens.verify(apiKey);
    if (!caller || !apiKey) throw unauthorized('the API key (X-API-KEY)');
    return { caller, apiKey };
  }

  /** The access token of one sandbox for the holder of apiKey: one per pair, however often it is asked for. */
  grant(apiKey: string, sandboxId: string): string {
    for (const [token, g] of this.grants) if (g.apiKey === apiKey && g.sandboxId === sandboxId) return token;
    const token = `wea_${randomBytes(24).toString('base64url')}`;
    this.grants.set(token, { apiKey, sandboxId });
    return token;
  }

  /** An envd call's caller and the sandbox it may touch. */
  envdCaller(headers: IncomingHttpHeaders): { caller: TokenInfo; sandboxId: string } {
    const token = header(headers, 'x-access-token') ?? '';
    const sandboxId = header(headers, 'e2b-sandbox-id') ?? '';
    let grant: Grant | undefined;
    for (const [known, g] of this.grants) {
      const a = Buffer.from(known);
      const b = Buffer.from(token);
      if (a.length === b.length && timingSafeEqual(a, b)) grant = g;
    }
    const caller = grant ? this.tokens.verify(grant.apiKey) : null;
    if (!grant || !caller) throw unauthorized('the sandbox access token (X-Access-Token)');
    if (grant.sandboxId !== sandboxId)
      throw new WardenError(
        'E_UNAUTHORIZED',
        'this access token is for another sandbox',
        'send E2b-Sandbox-Id of the sandbox it was issued for',
      );
    return { caller, sandboxId };
  }

  /**
   * The E2B user a call asks to act as (envd's Basic authorization, or ?username=). Warden's policy
   * decides who runs commands, so only the SDK's own default, `user`, is taken, and means that.
   */
  static checkUser(headers: IncomingHttpHeaders, username?: string): void {
    const basic = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header(headers, 'authorization') ?? '');
    const fromHeader = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':')[0] : undefined;
    for (const name of [fromHeader, username])
      if (name && name !== 'user')
        throw new E2bUnsupported(`acting as user "${name}"`, "Warden's policy decides which user runs a command");
  }

  /** Forgets the tokens of a sandbox that is gone. */
  forget(sandboxId: string): void {
    for (const [token, g] of this.grants) if (g.sandboxId === sandboxId) this.grants.delete(token);
  }
}
