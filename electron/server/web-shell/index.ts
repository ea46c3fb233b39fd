// The browser UI served by `warden serve` (over WebSocket). Owned by the UI work; the server only
// calls registerWebShell once, after auth and Host/Origin checks are installed for every route.
import type { FastifyInstance } from 'fastify';
import type { WardenEngine } from '../../engine/engine.js';
import type { Gateway } from '../../engine/gateway/gateway.js';
import type { TokenStore } from '../tokens.js';

export interface WebShellDeps {
  engine: WardenEngine;
  gateway: Gateway;
  tokens: TokenStore;
  home: string;
}

export async function registerWebShell(_app: FastifyInstance, _deps: WebShellDeps): Promise<void> {}
