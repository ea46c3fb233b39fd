import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalize, canonicalizeWithCopy, entryCanonical, entryHash, GENESIS_HASH } from './canonical.js';

function double(bits: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${bits}`));
  return view.getFloat64(0);
}

describe('RFC 8785 canonical JSON', () => {
  // RFC 8785 §3.2.2 sample, and its published UTF-8 output.
  it('reproduces the RFC 8785 §3.2.2 sample byte for byte', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    ) as unknown;
    const out = canonicalize(input);
    expect(out).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
    const published = `
      7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72
      75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a
      5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
      65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37
      5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30
      30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d`;
    expect(Buffer.from(out, 'utf8').toString('hex')).toBe(published.replace(/\s+/g, ''));
  });

  // cyberphone/json-canonicalization testdata (the reference implementation's vectors).
  const vectors: Array<[string, string, string]> = [
    ['arrays', '[56,{"d":true,"10":null,"1":[]}]', '[56,{"1":[],"10":null,"d":true}]'],
    [
      'french',
      '{"peach":"This sorting order","péché":"is wrong according to French","pêche":"but canonicalization MUST","sin":"ingnore locale"}',
      '{"peach":"This sorting order","péché":"is wrong according to French","pêche":"but canonicalization MUST","sin":"ingnore locale"}',
    ],
    [
      'structures',
      '{"1":{"f":{"f":"hi","F":5},"\\n":56.0},"10":{},"":"empty","a":{},"111":[{}],"A":{}}',
      '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}',
    ],
    ['unicode', '{"Unnormalized Unicode":"\\u1e0d\\u0307"}', '{"Unnormalized Unicode":"\u1e0d\u0307"}'],
    [
      'values',
      '{"numbers":[1E30,4.50,333333333.33333329,2e-3,0.000000000000000000000000001],"escaping":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
      '{"escaping":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/","literals":[null,true,false],"numbers":[1e+30,4.5,333333333.3333333,0.002,1e-27]}',
    ],
    [
      'weird',
      '{"\\u20ac":"Euro Sign","1":"One","\\u0080":"Control\\u007f","\\ud83d\\ude02":"Smiley","\\u00f6":"Latin Small Letter O With Diaeresis","\\ufb33":"Hebrew Letter Dalet With Dagesh","</script>":"Browser Challenge"}',
      '{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\u{1f602}":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    ],
  ];
  it.each(vectors)('cyberphone testdata %s', (_name, input, expected) => {
    expect(canonicalize(JSON.parse(input))).toBe(expected);
  });

  it('cyberphone testdata simpleString matches its published bytes', () => {
    const hex = '22 74 68 69 73 20 69 73 20 61 20 74 65 73 74 20 73 74 72 69 6E 67 20 31 32 33 35 22';
    expect(Buffer.from(canonicalize('this is a test string 1235')).toString('hex')).toBe(hex.replace(/ /g, '').toLowerCase());
  });

  // RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
  const numbers: Array<[string, string]> = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  it.each(numbers)('Appendix B number 0x%s → %s', (bits, expected) => {
    expect(canonicalize(double(bits))).toBe(expected);
  });

  it.each([
    ['NaN (7fffffffffffffff)', double('7fffffffffffffff')],
    ['Infinity (7ff0000000000000)', double('7ff0000000000000')],
    ['a lone surrogate', 'a\ud800b'],
    ['a lone surrogate in a key', { ['\udc00']: 1 }],
    ['a bigint', 1n],
    ['undefined', undefined],
    ['a function', () => 1],
    ['a Map', new Map([[1, 2]])],
    ['undefined in an array', [1, undefined]],
  ])('rejects %s', (_what, value) => {
    expect(() => canonicalize(value)).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT' }));
  });

  it('rejects cycles instead of overflowing the stack', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => canonicalize(a)).toThrow(/deeper/);
  });

  it('sorts keys by UTF-16 code units, not code points', () => {
    // U+FB33 (one unit, 0xFB33) sorts after U+1F602 (surrogates 0xD83D 0xDE02) in UTF-16 order.
    expect(canonicalize({ '\ufb33': 1, '\u{1f602}': 2 })).toBe('{"\u{1f602}":2,"\ufb33":1}');
  });

  it('orders index-like keys as strings, not as JavaScript orders them', () => {
    expect(canonicalize({ 2: 'b', 10: 'a', x: { 1: 0, 0: 1 } })).toBe('{"10":"a","2":"b","x":{"0":1,"1":0}}');
  });

  it('keeps a "__proto__" member as data, like JSON.parse', () => {
    const value = JSON.parse('{"b":1,"__proto__":{"x":1}}') as unknown;
    const { json, copy } = canonicalizeWithCopy(value);
    expect(json).toBe('{"__proto__":{"x":1},"b":1}');
    expect(copy).toEqual(JSON.parse(json));
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  it('returns a plain copy equal to parsing its own text', () => {
    const value = { z: [1, -0, 'x'], a: { d: new Date(0), u: undefined }, m: 'é😂' };
    const { json, copy } = canonicalizeWithCopy(value);
    expect(copy).toEqual(JSON.parse(json));
    expect(copy).not.toBe(value);
  });

  it('drops undefined members like JSON.stringify and uses toJSON', () => {
    expect(canonicalize({ b: undefined, a: new Date(0) })).toBe('{"a":"1970-01-01T00:00:00.000Z"}');
  });
});

describe('entry encoding', () => {
  const samples = [
    { seq: 1, time: '2026-01-01T00:00:00.000Z', actor: 'user', sandboxId: null, kind: 'engine.down', payload: {}, prevHash: GENESIS_HASH },
    {
      seq: 9_007_199_254_740_991,
      time: '2026-01-01T00:00:00.000Z',
      actor: 'agent "q" \\ é 😂',
      sandboxId: 'sb-1.a_b',
      kind: 'exec.finished',
      payload: { z: [1, 2.5, -0, 'x\ny'], a: { nested: true, n: null }, '€': 1e21 },
      prevHash: 'ab'.repeat(32),
    },
  ];
  it.each(samples)('the concatenated text equals JCS of the entry object (seq $seq)', (s) => {
    const fast = entryCanonical({ ...s, payloadJson: canonicalize(s.payload) });
    const generic = canonicalize({
      seq: s.seq,
      time: s.time,
      actor: s.actor,
      sandbox_id: s.sandboxId,
      kind: s.kind,
      payload: s.payload,
      prev_hash: s.prevHash,
    });
    expect(fast).toBe(generic);
    const expected = createHash('sha256')
      .update(Buffer.concat([Buffer.from([0]), Buffer.from(generic, 'utf8')]))
      .digest('hex');
    expect(entryHash(fast)).toBe(expected);
  });
});
