// The renderer is loaded from app://warden/, not file://: a standard, secure origin of its own,
// served only from the built renderer folder, with the CSP sent as a header on every response.
import { protocol } from 'electron';
import { readFile } from 'node:fs/promises';
import { join, normalize, sep } from 'node:path';
import { RENDERER_SECURITY_HEADERS, contentTypeOf } from '../ui-door/csp.js';

export const APP_SCHEME = 'app';
export const APP_HOST = 'warden';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

/** Must run before the app is ready. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
}

export function handleAppProtocol(rendererDir: string): void {
  const root = normalize(rendererDir + sep);
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host !== APP_HOST || request.method !== 'GET') return new Response('not found', { status: 404 });
    const path = normalize(join(root, decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname)));
    if (!path.startsWith(root)) return new Response('not found', { status: 404 });
    try {
      const body = await readFile(path);
      return new Response(body, { status: 200, headers: { ...RENDERER_SECURITY_HEADERS, 'content-type': contentTypeOf(path) } });
    } catch {
      return new Response('not found', { status: 404 });
    }
  });
}
