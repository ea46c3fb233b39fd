// The egress decision on its own: strictest matching rule, the default, globs, ports, cidr rules,
// the guard on special addresses, resolve pins, and names denied before any lookup.
import { describe, expect, it } from 'vitest';
import { EgressPolicySchema, type EgressPolicy } from '../../../shared/types/policy.js';
import { parseAuthority, parseTarget } from './destination.js';
import { decideEgress } from './egress-decision.js';

const policy = (p: unknown): EgressPolicy => EgressPolicySchema.parse(p);
const to = (host: string, port = 443) => parseTarget(host, port)!;
/** A resolver that must not be asked, and one with fixed answers. */
const noLookup = () => Promise.reject(new Error('looked up'));
const dns =
  (answers: Record<string, string>) =>
  async (host: string): Promise<string> => {
    const a = answers[host];
    if (!a) throw new Error('NXDOMAIN');
    return a;
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

  it('refuses rules without a host or cidr', () => {
    expect(EgressPolicySchema.safeParse({ rules: [{ action: 'allow' }] }).success).toBe(false);
    expect(EgressPolicySchema.safeParse({ resolve: { 'a.test': 'not-an-ip' } }).success).toBe(false);
  });
});
