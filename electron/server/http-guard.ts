// Checks made before anything else on every request, HTTP or WebSocket upgrade: the Host header must
// name this loopback server (DNS rebinding sends the attacker's name), and a browser's Origin or
// Sec-Fetch-Site must not be another site (a page must not drive the API with a user's browser).
// Each of these headers may appear once: Node folds a second Host into the first value and keeps
// the first Authorization, so a repeated one (a valid Host, then the attacker's) is refused outright.
import type { IncomingHttpHeaders } from 'node:http';
import { WardenError } from '../../shared/errors.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function allowedHosts(port: number): Set<string> {
  return new Set(LOOPBACK_NAMES.map((h) => `${h}:${port}`));
}

/** Headers a request may carry at most once (checked on the raw list, before Node's folding). */
const SINGLE_HEADERS = ['host', 'origin', 'authorization'];

function refuseRepeatedHeaders(rawHeaders: readonly string[]): void {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? '').toLowerCase();
    if (!SINGLE_HEADERS.includes(name)) continue;
    if (seen.has(name))
      throw new WardenError('E_BAD_INPUT', `the ${name} header appears more than once`, 'send each of Host, Origin and Authorization once');
    seen.add(name);
  }
}

export function checkHostAndOrigin(headers: IncomingHttpHeaders, port: number, rawHeaders: readonly string[]): void {
  refuseRepeatedHeaders(rawHeaders);
  const hosts = allowedHosts(port);
  const host = headers.host?.toLowerCase();
  if (!host || !hosts.has(host)) {
    throw new WardenError(
      'E_POLICY_DENIED',
      `Host ${JSON.stringify(headers.host ?? '')} is not this server`,
      `use http://127.0.0.1:${port}`,
    );
  }
  const origin = headers.origin;
  if (origin !== undefined) {
    let ok: boolean;
    try {
      const u = new URL(origin);
      ok = u.protocol === 'http:' && hosts.has(u.host.toLowerCase());
    } catch {
      ok = false;
    }
    if (!ok) throw new WardenError('E_POLICY_DENIED', `cross-origin requests are refused (Origin ${origin})`);
  }
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new WardenError('E_POLICY_DENIED', `cross-site requests are refused (Sec-Fetch-Site ${site})`);
  }
}

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (!auth) return undefined;
  const m = /^Bearer ([\x21-\x7e]{1,256})$/.exec(auth);
  return m ? m[1] : undefined;
}
