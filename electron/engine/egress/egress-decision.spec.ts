// The egress decision on its own: strictest matching rule, the default, globs, ports, cidr rules,
// the guard on special addresses, resolve pins, and names denied before any lookup.
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { EgressPolicySchema, type EgressPolicy } from '../../../shared/types/policy.js';
import { canonicalAddress, inCidr, parseAuthority, parseTarget, specialKind } from './destination.js';
import { decideEgress } from './egress-decision.js';

const policy = (p: unknown): EgressPolicy => EgressPolicySchema.parse(p);
const to = (host: string, port = 443) => parseTarget(host, port)!;
/** A resolver that must not be asked, and one with fixed answers. */
const noLookup = () => Promise.reject(new Error('looked up'));
const dns =
  (answers: Record<string, string>) =>
  async (host: string): Promise<string> => {
    if (!Object.hasOwn(answers, host)) throw new Error('NXDOMAIN');
    return answers[host]!;
  };

describe('egress decision', () => {
  it('denies by default, before any lookup, and says so', async () => {
    expect(await decideEgress(policy({}), to('example.com'), noLookup)).toEqual({
      action: 'deny',
      rule: 'no rule allows it; default deny',
      address: null,
    });
  });

  it('allows an exact name and a *. glob on the ports given; the strictest matching rule wins', async () => {
    const p = policy({
      rules: [
        { host: 'pypi.org', port: 443, action: 'allow' },
        { host: '*.example.com', action: 'allow' },
        { host: 'bad.example.com', action: 'deny' },
      ],
    });
    const answers = dns({ 'pypi.org': '151.101.0.223', 'a.b.example.com': '93.184.216.34' });
    expect(await decideEgress(p, to('pypi.org'), answers)).toMatchObject({ action: 'allow', address: '151.101.0.223' });
    expect((await decideEgress(p, to('pypi.org', 80), answers)).rule).toBe('no rule allows it; default deny');
    expect(await decideEgress(p, to('a.b.example.com'), answers)).toMatchObject({
      action: 'allow',
      rule: 'egress.rules[1] (host *.example.com, allow)',
    });
    expect((await decideEgress(p, to('example.com'), answers)).action).toBe('deny');
    expect(await decideEgress(p, to('bad.example.com'), noLookup)).toEqual({
      action: 'deny',
      rule: 'egress.rules[2] (host bad.example.com, deny)',
      address: null,
    });
  });

  it('refuses loopback, link-local and private addresses unless a cidr rule names them', async () => {
    const p = policy({
      default: 'allow',
      rules: [{ host: 'git.internal', cidr: '10.1.2.0/24', action: 'allow' }],
      resolve: { 'git.internal': '10.1.2.3', 'sneaky.test': '127.0.0.1', 'meta.test': '169.254.169.254' },
    });
    expect(await decideEgress(p, to('git.internal'), noLookup)).toMatchObject({ action: 'allow', address: '10.1.2.3' });
    expect((await decideEgress(p, to('sneaky.test'), noLookup)).rule).toMatch(/guard: 127\.0\.0\.1 is a loopback address/);
    expect((await decideEgress(p, to('meta.test'), noLookup)).rule).toMatch(/link-local/);
    expect((await decideEgress(p, to('192.168.1.1'), noLookup)).rule).toMatch(/private/);
    expect((await decideEgress(p, to('::ffff:127.0.0.1'), noLookup)).rule).toMatch(/loopback/);
    expect((await decideEgress(p, to('8.8.8.8'), noLookup)).action).toBe('allow');
  });

  it('leaves ask to a person (after the guard), and calls a name that does not resolve a failure', async () => {
    const p = policy({
      rules: [
        { host: 'asked.test', action: 'ask' },
        { host: 'gone.test', action: 'allow' },
      ],
    });
    expect(await decideEgress(p, to('asked.test'), dns({ 'asked.test': '1.2.3.4' }))).toEqual({
      action: 'ask',
      rule: 'egress.rules[0] (host asked.test, ask)',
      address: '1.2.3.4',
    });
    expect((await decideEgress(p, to('asked.test'), dns({ 'asked.test': '10.0.0.1' }))).action).toBe('deny');
    expect(await decideEgress(p, to('gone.test'), dns({}))).toMatchObject({ action: 'deny', unresolved: true });
  });

  it('reads CONNECT authorities, v6 literals included, and refuses what is not one', () => {
    expect(parseAuthority('Example.COM.:443')).toEqual({ host: 'example.com', port: 443 });
    expect(parseAuthority('[::1]:8443')).toEqual({ host: '::1', port: 8443 });
    for (const bad of ['example.com', 'example.com:0', 'example.com:99999', 'exa mple.com:80', '::1:80'])
      expect(parseAuthority(bad)).toBeNull();
  });

  it('spells every address one way: IPv4-mapped in any spelling is IPv4, other IPv6 canonical, a zone is none', () => {
    for (const v of ['::ffff:c000:202', '::FFFF:C000:0202', '0:0:0:0:0:ffff:c000:202', '0000::ffff:192.0.2.2', '::ffff:192.0.2.2'])
      expect(canonicalAddress(v)).toBe('192.0.2.2');
    expect(canonicalAddress('FD00:0:0::0002')).toBe('fd00::2');
    expect(canonicalAddress('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(canonicalAddress('fe80::1%eth0')).toBeNull();
    expect(canonicalAddress('0x7f.1')).toBeNull();
    // Literal hosts, and names the resolver would read as IPv4 (0x7f.1, 2130706433), take that spelling.
    expect(parseAuthority('[::FFFF:7f00:1]:80')).toEqual({ host: '127.0.0.1', port: 80 });
    expect(parseAuthority('0x7f.1:80')).toEqual({ host: '127.0.0.1', port: 80 });
    expect(parseAuthority('2130706433:80')).toEqual({ host: '127.0.0.1', port: 80 });
    expect(parseAuthority('[0:0::FD00:2]:80')).toEqual({ host: '::fd00:2', port: 80 });
    expect(parseAuthority('[fe80::1%25eth0]:80')).toBeNull();
  });

  it("finds this host's own addresses, and the guard's ranges, whatever the spelling", () => {
    expect(specialKind('::ffff:7f00:1')).toBe('a loopback');
    expect(specialKind('0:0:0:0:0:ffff:a9fe:a9fe')).toBe('a link-local');
    expect(specialKind('0:0:0:0:0:0:0:1')).toBe('a loopback');
    expect(inCidr('::ffff:a01:203', '10.1.2.0/24')).toBe(true);
    expect(inCidr('10.1.2.3', '::ffff:10.1.2.0/120')).toBe(true);
    for (const i of Object.values(networkInterfaces()).flatMap((a) => a ?? [])) {
      const [a, b, c, d] = i.address.split('.').map(Number) as [number, number, number, number];
      const v6 =
        i.family === 'IPv4'
          ? `0:0:0:0:0:FFFF:${(((a << 8) | b) + 0x10000).toString(16).slice(1)}:${(((c << 8) | d) + 0x10000).toString(16).slice(1)}`
          : i.address
              .split(':')
              .map((g) => (g ? g.padStart(4, '0') : g))
              .join(':')
              .toUpperCase();
      expect(specialKind(v6)).toBe(specialKind(i.address));
      expect(specialKind(i.address)).not.toBeNull();
    }
  });

  it('refuses IPv4-compatible, SIIT and NAT64 addresses (which can carry any IPv4 one) unless a cidr names them', async () => {
    const p = policy({ default: 'allow', rules: [{ cidr: '64:ff9b::/96', action: 'allow' }] });
    expect((await decideEgress(p, to('::c000:202'), noLookup)).rule).toMatch(/guard: ::c000:202 is an IPv4-compatible address/);
    expect((await decideEgress(p, to('::192.0.2.2'), noLookup)).rule).toMatch(/guard: ::c000:202 is an IPv4-compatible/);
    expect((await decideEgress(p, to('::ffff:0:c000:202'), noLookup)).rule).toMatch(/SIIT/);
    expect((await decideEgress(p, to('64:ff9b:1::c000:202'), noLookup)).rule).toMatch(/NAT64/);
    expect(await decideEgress(p, to('64:ff9b::c000:202'), noLookup)).toMatchObject({ action: 'allow', address: '64:ff9b::c000:202' });
  });

  it('matches a rule naming a literal address however the host spells it, and resolver answers too', async () => {
    const p = policy({
      default: 'allow',
      rules: [
        { host: '203.0.113.9', action: 'deny' },
        { host: '2001:DB8::0:1', action: 'deny' },
      ],
    });
    for (const h of ['203.0.113.9', '::ffff:cb00:7109', '0:0:0:0:0:ffff:203.0.113.9', '0xcb007109', '3405803785'])
      expect((await decideEgress(p, to(h), noLookup)).rule).toBe('egress.rules[0] (host 203.0.113.9, deny)');
    expect((await decideEgress(p, to('2001:db8:0:0::1'), noLookup)).action).toBe('deny');
    // A resolver's mapped answer is its IPv4 address, as the guard and the ledger see it.
    expect(await decideEgress(p, to('a.test'), dns({ 'a.test': '::ffff:7f00:1' }))).toMatchObject({ action: 'deny', address: '127.0.0.1' });
  });

  it("decides names that are Object.prototype's keys like any other (no pin found on the prototype)", async () => {
    const p = policy({ default: 'allow', resolve: { 'Pinned.Test': '203.0.113.7' } });
    for (const h of ['constructor', '__proto__'])
      expect(await decideEgress(p, to(h), dns({}))).toMatchObject({ action: 'deny', unresolved: true, rule: `${h} does not resolve` });
    expect(await decideEgress(policy({}), to('constructor'), noLookup)).toMatchObject({ action: 'deny', address: null });
    expect(await decideEgress(p, to('pinned.test'), noLookup)).toMatchObject({ action: 'allow', address: '203.0.113.7' });
  });

  it('refuses rules without a host or cidr', () => {
    expect(EgressPolicySchema.safeParse({ rules: [{ action: 'allow' }] }).success).toBe(false);
    expect(EgressPolicySchema.safeParse({ resolve: { 'a.test': 'not-an-ip' } }).success).toBe(false);
  });
});
