// Where a connection wants to go, and what kind of address it ends at. The guard exists because a
// name is only a name: one that resolves (or is pinned) to loopback, link-local (cloud metadata),
// a private range or this host's own address would reach Warden's API, the Podman socket's host or
// the LAN; those are refused unless a rule names the address with a cidr (egress-decision.ts).
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

export interface Target {
  /** Lower case, no trailing dot, an IPv6 literal without brackets. */
  host: string;
  port: number;
}

const HOST_TEXT = /^[a-z0-9_]([a-z0-9_.-]{0,252})$/;

/** `host:port` (CONNECT's authority) or a URL's parts, normalized; null when it is not a destination. */
export function parseTarget(host: string, port: string | number): Target | null {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  const p = typeof port === 'number' ? port : /^\d{1,5}$/.test(port) ? Number(port) : NaN;
  if (!Number.isInteger(p) || p < 1 || p > 65535) return null;
  if (!isIP(h) && !HOST_TEXT.test(h)) return null;
  return { host: h, port: p };
}

/** CONNECT's request target, `host:port` or `[v6]:port`. */
export function parseAuthority(authority: string): Target | null {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  return m ? parseTarget(m[1]!, m[2]!) : null;
}

/** An IPv4-mapped IPv6 address is its IPv4 address: both spellings reach the same place. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address.toLowerCase();
}

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

const SPECIAL: Array<[string, string, number]> = [
  ['loopback', '127.0.0.0', 8],
  ['loopback', '::1', 128],
  ['unspecified', '0.0.0.0', 8],
  ['unspecified', '::', 128],
  ['link-local', '169.254.0.0', 16],
  ['link-local', 'fe80::', 10],
  ['private', '10.0.0.0', 8],
  ['private', '172.16.0.0', 12],
  ['private', '192.168.0.0', 16],
  ['private', '100.64.0.0', 10],
  ['private', 'fc00::', 7],
  ['multicast', '224.0.0.0', 4],
  ['multicast', 'ff00::', 8],
  ['broadcast', '255.255.255.255', 32],
];

const specialLists = SPECIAL.map(([kind, net, prefix]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family(net));
  return { kind, list };
});

/** Why this address is not reachable without a rule naming it, or null for an ordinary public address. */
export function specialKind(address: string): string | null {
  const a = plainAddress(address);
  for (const { kind, list } of specialLists) if (list.check(a, family(a))) return kind;
  for (const addrs of Object.values(networkInterfaces()))
    for (const i of addrs ?? []) if (plainAddress(i.address) === a) return "this host's own";
  return null;
}

const cidrCache = new Map<string, BlockList | null>();

/** Whether the address lies in `cidr` (a.b.c.d/n or v6/n); a malformed block matches nothing. */
export function inCidr(address: string, cidr: string): boolean {
  let list = cidrCache.get(cidr);
  if (list === undefined) {
    list = null;
    const [net, bits] = cidr.split('/');
    const fam = net ? isIP(net) : 0;
    const prefix = Number(bits);
    if (fam && Number.isInteger(prefix) && prefix >= 0 && prefix <= (fam === 4 ? 32 : 128)) {
      list = new BlockList();
      list.addSubnet(net!, prefix, fam === 4 ? 'ipv4' : 'ipv6');
    }
    if (cidrCache.size > 1000) cidrCache.clear();
    cidrCache.set(cidr, list);
  }
  const a = plainAddress(address);
  return list !== null && list.check(a, family(a));
}

/** `*.example.com` covers every name below example.com (not example.com itself); otherwise names are equal. */
export function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  if (p.startsWith('*.')) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  return p === host;
}
