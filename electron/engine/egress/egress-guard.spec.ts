// The red team's three holes in the egress proxy, replayed on real sockets through the real proxy
// (a raw TCP origin that records every connection it gets): the host's own address spelled as an
// IPv4-mapped IPv6 literal, hosts named after Object.prototype's keys, and a plain request that
// names its host or its length twice to smuggle a second request to the origin.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NetClosedPayload, NetConnectPayload } from '../../../shared/types/ledger.js';
import { EgressPolicySchema, type EgressPolicy } from '../../../shared/types/policy.js';
import { EgressProxy } from './egress-proxy.js';

/** A non-loopback IPv4 address of this host, where the origin listens for the own-address case. */
const own = Object.values(networkInterfaces())
  .flatMap((a) => a ?? [])
  .find((i) => i.family === 'IPv4' && !i.internal)?.address;

let policy: EgressPolicy;
let entries: Array<{ kind: string; payload: NetConnectPayload | NetClosedPayload }>;
/** What each connection an origin took was sent, listed the moment it is taken. */
let reached: Array<{ got: string }>;
const servers: Server[] = [];

const listen = async (server: Server, host: string): Promise<number> => {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, host, r));
  return (server.address() as { port: number }).port;
};

/** An origin that keeps every byte it is sent, and answers each head with a short 200. */
function origin(): Server {
  return createServer((s) => {
    const seen = { got: '' };
    reached.push(seen);
    s.on('error', () => undefined);
    s.on('data', (d: Buffer) => {
      seen.got += d.toString('latin1');
      if (seen.got.includes('\r\n\r\n') && !s.writableEnded) s.end('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n');
    });
  });
}

let proxyPort: number;
let localPort: number;
let ownPort = 0;

beforeAll(async () => {
  const proxy = new EgressProxy({
    policy: () => policy,
    record: (_sb, kind, payload) => void entries.push({ kind, payload }),
    ask: () => Promise.resolve({ approved: false, why: 'nobody asked' }),
    meter: () => null,
    resolve: () => Promise.reject(new Error('NXDOMAIN')),
  });
  proxyPort = await listen(
    createServer({ allowHalfOpen: true }, (s: Socket) => proxy.handle(s, 'sb-guard')),
    '127.0.0.1',
  );
  localPort = await listen(origin(), '127.0.0.1');
  if (own) ownPort = await listen(origin(), own);
});

afterAll(() => {
  for (const s of servers) s.close();
});

beforeEach(() => {
  entries = [];
  reached = [];
});

/** Sends raw bytes to the proxy as a sandbox's program would; the whole answer once the proxy closes. */
const send = (raw: string) =>
  new Promise<string>((resolve, reject) => {
    let answer = '';
    const s = connect(proxyPort, '127.0.0.1', () => s.write(raw));
    s.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    s.once('error', reject);
    s.once('close', () => resolve(answer));
  });
const connects = () => entries.filter((e) => e.kind === 'net.connect').map((e) => e.payload as NetConnectPayload);

describe.skipIf(!own)("this host's own address, however IPv6 spells it", () => {
  const [a, b, c, d] = (own ?? '0.0.0.0').split('.').map(Number) as [number, number, number, number];
  const hi = ((a << 8) | b).toString(16);
  const lo = ((c << 8) | d).toString(16);
  const spellings = [
    `::ffff:${hi}:${lo}`,
    `::FFFF:${hi.toUpperCase()}:${lo.toUpperCase()}`,
    `0:0:0:0:0:ffff:${hi.padStart(4, '0')}:${lo.padStart(4, '0')}`,
    `0000:0000::ffff:${hi}:${lo}`,
    `::ffff:${own}`,
  ];

  it('is refused by the guard as its IPv4 address, plain HTTP and CONNECT, and recorded in that spelling', async () => {
    policy = EgressPolicySchema.parse({ default: 'allow' });
    for (const v6 of spellings) {
      const plain = await send(`GET http://[${v6}]:${ownPort}/ HTTP/1.1\r\nHost: [${v6}]:${ownPort}\r\n\r\n`);
      expect(plain).toMatch(new RegExp(`^HTTP/1\\.1 403 [^]*denied: guard: ${own!.replace(/\./g, '\\.')} is this host's own address`));
      const tunnel = await send(`CONNECT [${v6}]:${ownPort} HTTP/1.1\r\n\r\n`);
      expect(tunnel).toMatch(/^HTTP\/1\.1 403 [^]*this host's own address/);
    }
    expect(reached).toEqual([]);
    expect(connects()).toHaveLength(spellings.length * 2);
    expect(connects().every((e) => e.host === own && e.address === own && e.decision === 'deny')).toBe(true);
  });

  it('is reached in any spelling once a rule names it with a cidr (so the refusal above is the guard)', async () => {
    policy = EgressPolicySchema.parse({ rules: [{ cidr: `${own}/32`, action: 'allow' }] });
    for (const v6 of spellings.slice(0, 3))
      expect(await send(`GET http://[${v6}]:${ownPort}/x HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*ok\n$/);
    expect(reached).toHaveLength(3);
  });
});

describe("hosts named after Object.prototype's keys", () => {
  it('are decided like any other name and recorded, by the default and by the resolver', async () => {
    policy = EgressPolicySchema.parse({});
    for (const host of ['constructor', '__proto__'])
      expect(await send(`CONNECT ${host}:443 HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 [^]*denied: no rule allows it; default deny\n$/);
    policy = EgressPolicySchema.parse({ default: 'allow', resolve: { 'pinned.test': '127.0.0.1' } });
    expect(await send(`GET http://constructor/ HTTP/1.1\r\nHost: constructor\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 502 [^]*constructor does not resolve\n$/,
    );
    expect(await send(`CONNECT __proto__:443 HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 502 [^]*__proto__ does not resolve\n$/);
    expect(connects().map((c) => `${c.via} ${c.host} ${c.decision}`)).toEqual([
      'connect constructor deny',
      'connect __proto__ deny',
      'http constructor deny',
      'connect __proto__ deny',
    ]);
  });
});

describe('a plain request that names its host or its length twice', () => {
  const allowed = () =>
    EgressPolicySchema.parse({ rules: [{ host: 'h.test', cidr: '127.0.0.1/32', action: 'allow' }], resolve: { 'h.test': '127.0.0.1' } });
  const second = 'GET /smuggled HTTP/1.1\r\nHost: evil.example.com\r\n\r\n';

  it('forwards the one-of-each request (the origin is reachable)', async () => {
    policy = allowed();
    const body = 'x'.repeat(5);
    const answer = await send(
      `POST http://h.test:${localPort}/a HTTP/1.1\r\nHost: h.test:${localPort}\r\nContent-Length: 5\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(reached).toHaveLength(1);
  });

  it("refuses the red team's request (two Hosts, two Content-Lengths, a second request as body) with a 400; nothing reaches the origin", async () => {
    policy = allowed();
    const answer = await send(
      `POST http://h.test:${localPort}/a HTTP/1.1\r\nHost: h.test:${localPort}\r\nHost: evil.example.com\r\n` +
        `Content-Length: ${second.length + 10}\r\nContent-Length: 0\r\n\r\n${second}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[^]*\r\n\r\nwarden egress: the Host header is repeated \(send it once\)\n$/);
    expect(reached).toEqual([]);
    expect(connects()).toEqual([
      expect.objectContaining({
        via: 'http',
        host: 'h.test',
        decision: 'deny',
        address: null,
        rule: 'http: the Host header is repeated (send it once)',
      }),
    ]);
  });

  it('refuses two Content-Lengths, two Transfer-Encodings, or one of each, and says which', async () => {
    policy = allowed();
    const start = `POST http://h.test:${localPort}/a HTTP/1.1\r\nHost: h.test:${localPort}\r\n`;
    const cases: Array<[string, string]> = [
      ['Content-Length: 60\r\nContent-Length: 0', 'the Content-Length header is repeated (send it once)'],
      ['Content-Length: 0\r\ncontent-length: 0', 'the Content-Length header is repeated (send it once)'],
      ['Transfer-Encoding: chunked\r\nTransfer-Encoding: identity', 'the Transfer-Encoding header is repeated (send it once)'],
      ['Content-Length: 60\r\nTransfer-Encoding: chunked', 'Content-Length and Transfer-Encoding conflict (send one)'],
    ];
    for (const [headers, why] of cases)
      expect(await send(`${start}${headers}\r\n\r\n${second}`)).toMatch(
        new RegExp(`^HTTP/1\\.1 400 [^]*\r\n\r\nwarden egress: ${why.replace(/[()]/g, '\\$&')}\n$`),
      );
    expect(reached).toEqual([]);
    expect(connects().map((c) => c.rule)).toEqual(cases.map(([, why]) => `http: ${why}`));
  });
});
