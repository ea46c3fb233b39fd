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

/**
 * `host:port` (CONNECT's authority) or a URL's parts, normalized; null when it is not a destination.
 * A literal address takes its canonical spelling (canonicalAddress), and so does a name that is an
 * IPv4 address in another spelling (`0x7f.1`, `2130706433`, which the resolver would read as one):
 * rules that name a literal, and the ledger, then see one address however it was written.
 */
export function parseTarget(host: string, port: string | number): Target | null {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  const p = typeof port === 'number' ? port : /^\d{1,5}$/.test(port) ? Number(port) : NaN;
  if (!Number.isInteger(p) || p < 1 || p > 65535) return null;
  if (isIP(h)) {
    const canonical = canonicalAddress(h);
    return canonical ? { host: canonical, port: p } : null;
  }
  if (!HOST_TEXT.test(h)) return null;
  return { host: numericIPv4(h) ?? h, port: p };
}

/** The WHATWG URL parser's reading of a name that is really an IPv4 address, else null. */
function numericIPv4(name: string): string | null {
  try {
    const read = new URL(`http://${name}/`).hostname;
    return isIP(read) === 4 ? read : null;
  } catch {
    return null;
  }
}

/** CONNECT's request target, `host:port` or `[v6]:port`. */
export function parseAuthority(authority: string): Target | null {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  return m ? parseTarget(m[1]!, m[2]!) : null;
}

/**
 * One spelling per address, so no compare or range check can be slipped by writing it differently:
 * an IPv4-mapped IPv6 address, in any spelling (`::ffff:c000:202`, `::FFFF:192.0.2.2`,
 * `0:0:0:0:0:ffff:c000:0202`), is its IPv4 address (both reach the same place); any other IPv6
 * address takes the URL standard's serialization (lower case, no leading zeros, longest run of
 * zeros as `::`), which Node's URL parser computes, so no IPv6 parsing is hand-written here.
 * Null for what is not an address (a scoped `fe80::1%eth0` included: a zone is never a destination).
 */
export function canonicalAddress(address: string): string | null {
  const fam = isIP(address);
  if (fam === 4) return address; // isIP takes only plain dotted decimal, which is already canonical
  if (fam !== 6) return null;
  let text: string;
  try {
    text = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  // In the canonical text a mapped address is always `::ffff:` and its last 32 bits as two groups.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (!mapped) return text;
  const hi = parseInt(mapped[1]!, 16);
  const lo = parseInt(mapped[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

const SPECIAL: Array<[string, string, number]> = [
  ['a loopback', '127.0.0.0', 8],
  ['a loopback', '::1', 128],
  ['an unspecified', '0.0.0.0', 8],
  ['an unspecified', '::', 128],
  ['a link-local', '169.254.0.0', 16],
  ['a link-local', 'fe80::', 10],
  ['a private', '10.0.0.0', 8],
  ['a private', '172.16.0.0', 12],
  ['a private', '192.168.0.0', 16],
  ['a private', '100.64.0.0', 10],
  ['a private', 'fc00::', 7],
  ['a private', 'fec0::', 10], // site-local: deprecated, still routed locally where configured
  // IPv6 addresses that carry an IPv4 one and may reach it by a translator or tunnel of the host or
  // its network: which IPv4 address is not checked, so they are refused like private ones.
  ['an IPv4-compatible', '::', 96],
  ['an IPv4-translated (SIIT)', '::ffff:0:0:0', 96],
  ['a NAT64', '64:ff9b::', 96],
  ['a NAT64', '64:ff9b:1::', 48],
  ['a multicast', '224.0.0.0', 4],
  ['a multicast', 'ff00::', 8],
  ['a broadcast', '255.255.255.255', 32],
];

const specialLists = SPECIAL.map(([kind, net, prefix]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family(net));
  return { kind, list };
});

/** What kind of address this is (with its article: `a loopback`), when no rule without a cidr naming it may reach it; null for an ordinary public address. */
export function specialKind(address: string): string | null {
  const a = canonicalAddress(address);
  if (a === null) return 'a malformed';
  for (const { kind, list } of specialLists) if (list.check(a, family(a))) return kind;
  for (const addrs of Object.values(networkInterfaces()))
    for (const i of addrs ?? []) if (canonicalAddress(i.address) === a) return "this host's own";
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
  const a = canonicalAddress(address);
  return list !== null && a !== null && list.check(a, family(a));
}

/**
 * `*.example.com` covers every name below example.com (not example.com itself); otherwise names are
 * equal. A pattern that is a literal address is compared in its canonical spelling, as the host is.
 */
export function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  if (p.startsWith('*.')) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  return (isIP(p) ? canonicalAddress(p) : p) === host;
}
