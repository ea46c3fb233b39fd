// The web shell answers only to its own address: a Host header naming this server (so DNS
// rebinding gets nothing) and, when a browser sends one, an Origin of the same host (so another
// site's page cannot drive the socket or log in).
import type { AddressInfo } from 'node:net';

const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

export function hostsOfAddress(address: AddressInfo | string | null): Set<string> {
  const hosts = new Set<string>();
  if (!address || typeof address === 'string') return hosts;
  const names = new Set(LOOPBACK);
  if (address.address !== '0.0.0.0' && address.address !== '::')
    names.add(address.family === 'IPv6' ? `[${address.address}]` : address.address);
  for (const name of names) hosts.add(`${name}:${address.port}`);
  return hosts;
}

export function hostAllowed(hosts: Set<string>, host: string | undefined): boolean {
  return !!host && hosts.has(host.toLowerCase());
}

/** A request without Origin (not from a page) passes; one with Origin must be this very host. */
export function originAllowed(host: string | undefined, origin: string | undefined): boolean {
  if (origin === undefined) return true;
  return !!host && (origin === `http://${host}` || origin === `https://${host}`);
}
