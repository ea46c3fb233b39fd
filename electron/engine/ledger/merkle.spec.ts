import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  consistencyPath,
  EMPTY_ROOT,
  inclusionPath,
  leafHash,
  nodeHash,
  rootOf,
  verifyConsistency,
  verifyInclusion,
  type Hash,
} from './merkle.js';

// The RFC 6962 test vectors used by Certificate Transparency and transparency-dev/merkle
// (proof/verify_test.go): eight leaves, the root of every prefix, and known proofs.
const h = (hex: string) => Buffer.from(hex, 'hex');
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(h);
const ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
].map(h);
// [leaf (1-based), size, proof]
const INCLUSION: Array<[number, number, string[]]> = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [3, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [
    2,
    5,
    [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];
// [size1, size2, proof]
const CONSISTENCY: Array<[number, number, string[]]> = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [
    2,
    5,
    [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
  [
    6,
    7,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
];

const leafHashes = LEAVES.map((l) => leafHash(l));
const SOME = h('abacaba000000000000000000000000000000000000000000060061e00123456');

/** MTH straight from the RFC's recursive definition, over an in-memory array. */
function mth(leaves: readonly Hash[]): Hash {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
const subOf = (leaves: readonly Hash[]) => (start: number, end: number) => mth(leaves.slice(start, end));

describe('RFC 6962 tree hashing', () => {
  it('computes the published roots of every prefix of the eight test leaves', () => {
    for (let n = 1; n <= 8; n++) expect(rootOf(leafHashes.slice(0, n)).toString('hex')).toBe(ROOTS[n - 1]!.toString('hex'));
    expect(rootOf([]).toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it.each(INCLUSION)('generates and verifies the published inclusion proof of leaf %i in a tree of %i', (leaf, size, proof) => {
    const got = inclusionPath(leaf - 1, size, subOf(leafHashes));
    expect(got.map((x) => x.toString('hex'))).toEqual(proof);
    expect(verifyInclusion(leafHashes[leaf - 1]!, leaf - 1, size, proof.map(h), ROOTS[size - 1]!)).toBe(true);
  });

  it.each(CONSISTENCY)('generates and verifies the published consistency proof %i → %i', (m, n, proof) => {
    const got = consistencyPath(m, n, subOf(leafHashes));
    expect(got.map((x) => x.toString('hex'))).toEqual(proof);
    expect(verifyConsistency(m, n, ROOTS[m - 1]!, ROOTS[n - 1]!, proof.map(h))).toBe(true);
  });

  it('agrees with the recursive definition on every proof of every tree up to 40 leaves', () => {
    const leaves = Array.from({ length: 40 }, () => randomBytes(32));
    for (let n = 1; n <= leaves.length; n++) {
      const root = mth(leaves.slice(0, n));
      expect(rootOf(leaves.slice(0, n)).equals(root)).toBe(true);
      for (let i = 0; i < n; i++) expect(verifyInclusion(leaves[i]!, i, n, inclusionPath(i, n, subOf(leaves)), root)).toBe(true);
      for (let m = 0; m <= n; m++) {
        expect(verifyConsistency(m, n, mth(leaves.slice(0, m)), root, consistencyPath(m, n, subOf(leaves)))).toBe(true);
      }
    }
  });
});

describe('adversarial inclusion proofs are rejected', () => {
  // The probes of transparency-dev/merkle corruptInclusionProof, plus swaps and emptiness.
  it.each(INCLUSION.filter(([, , p]) => p.length > 0))('leaf %i of %i', (leaf, size, proofHex) => {
    const proof = proofHex.map(h);
    const index = leaf - 1;
    const root = ROOTS[size - 1]!;
    const lh = leafHashes[index]!;
    const probes: Array<[string, number, number, Hash, Hash[], Hash]> = [
      ['index − 1', index - 1, size, lh, proof, root],
      ['index + 1', index + 1, size, lh, proof, root],
      ['index ^ 2', index ^ 2, size, lh, proof, root],
      ['size × 2', index, size * 2, lh, proof, root],
      ['size ÷ 2', index, Math.floor(size / 2), lh, proof, root],
      ['wrong leaf', index, size, leafHash(Buffer.from('WrongLeaf')), proof, root],
      ['leaf of wrong length', index, size, Buffer.from('WrongLeaf'), proof, root],
      ['empty-tree root', index, size, lh, proof, EMPTY_ROOT],
      ['random root', index, size, lh, proof, SOME],
      ['trailing garbage', index, size, lh, [...proof, Buffer.alloc(0)], root],
      ['trailing root', index, size, lh, [...proof, root], root],
      ['preceding garbage', index, size, lh, [Buffer.alloc(0), ...proof], root],
      ['preceding root', index, size, lh, [root, ...proof], root],
      ['empty proof', index, size, lh, [], root],
      ['truncated', index, size, lh, proof.slice(0, -1), root],
      ['inserted component', index, size, lh, [proof[0]!, SOME, ...proof.slice(1)], root],
      ['negative index', -1, size, lh, proof, root],
      ['fractional size', index, size + 0.5, lh, proof, root],
      ['non-buffer element', index, size, lh, [proof[0]!.toString('hex') as unknown as Hash, ...proof.slice(1)], root],
    ];
    if (proof.length > 1) {
      probes.push(['swapped', index, size, lh, [proof[1]!, proof[0]!, ...proof.slice(2)], root]);
      probes.push(['reversed', index, size, lh, [...proof].reverse(), root]);
    }
    for (let i = 0; i < proof.length; i++) {
      const bent = proof.map((p) => Buffer.from(p));
      bent[i]![0]! ^= 8;
      probes.push([`bit flipped in proof[${i}]`, index, size, lh, bent, root]);
      probes.push([`proof[${i}] cut short`, index, size, lh, proof.map((p, j) => (j === i ? p.subarray(0, 31) : p)), root]);
    }
    const accepted = probes.filter(([, i, s, l, p, r]) => verifyInclusion(l, i, s, p, r)).map(([d]) => d);
    expect(accepted).toEqual([]);
  });

  it('rejects any proof for an empty tree or an index past the end', () => {
    expect(verifyInclusion(SOME, 0, 0, [], EMPTY_ROOT)).toBe(false);
    expect(verifyInclusion(SOME, 1, 1, [], SOME)).toBe(false);
    expect(verifyInclusion(SOME, 0, 1, [], SOME)).toBe(true);
  });
});

describe('adversarial consistency proofs are rejected', () => {
  it.each(CONSISTENCY.filter(([, , p]) => p.length > 0))('%i → %i', (m, n, proofHex) => {
    const proof = proofHex.map(h);
    const r1 = ROOTS[m - 1]!;
    const r2 = ROOTS[n - 1]!;
    const probes: Array<[string, number, number, Hash, Hash, Hash[]]> = [
      ['size1 − 1', m - 1, n, r1, r2, proof],
      ['size1 + 1', m + 1, n, r1, r2, proof],
      ['size1 ^ 2', m ^ 2, n, r1, r2, proof],
      ['size2 × 2', m, n * 2, r1, r2, proof],
      ['size2 ÷ 2', m, Math.floor(n / 2), r1, r2, proof],
      ['sizes swapped', n, m, r1, r2, proof],
      ['wrong root1', m, n, SOME, r2, proof],
      ['wrong root2', m, n, r1, SOME, proof],
      ['root of wrong length', m, n, Buffer.from('WrongRoot'), r2, proof],
      ['swapped roots', m, n, r2, r1, proof],
      ['empty proof', m, n, r1, r2, []],
      ['trailing garbage', m, n, r1, r2, [...proof, Buffer.alloc(0)]],
      ['trailing root1', m, n, r1, r2, [...proof, r1]],
      ['trailing root2', m, n, r1, r2, [...proof, r2]],
      ['preceding garbage', m, n, r1, r2, [Buffer.alloc(0), ...proof]],
      ['preceding root1', m, n, r1, r2, [r1, ...proof]],
      ['preceding root2', m, n, r1, r2, [r2, ...proof]],
      ['preceding proof[0]', m, n, r1, r2, [proof[0]!, ...proof]],
      ['truncated', m, n, r1, r2, proof.slice(0, -1)],
      ['reversed', m, n, r1, r2, [...proof].reverse()],
    ];
    if (proof.length > 1) probes.push(['swapped', m, n, r1, r2, [proof[1]!, proof[0]!, ...proof.slice(2)]]);
    for (let i = 0; i < proof.length; i++) {
      const bent = proof.map((p) => Buffer.from(p));
      bent[i]![0]! ^= 16;
      probes.push([`bit flipped in proof[${i}]`, m, n, r1, r2, bent]);
    }
    const accepted = probes.filter(([, a, b, x, y, p]) => verifyConsistency(a, b, x, y, p)).map(([d]) => d);
    expect(accepted).toEqual([]);
  });

  it('handles the trivial sizes exactly', () => {
    const r = ROOTS[0]!;
    expect(verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])).toBe(true);
    expect(verifyConsistency(0, 1, EMPTY_ROOT, r, [])).toBe(true);
    expect(verifyConsistency(1, 1, r, r, [])).toBe(true);
    expect(verifyConsistency(1, 1, r, SOME, [])).toBe(false); // same size, different roots
    expect(verifyConsistency(1, 0, r, EMPTY_ROOT, [])).toBe(false); // time travel
    expect(verifyConsistency(2, 1, r, r, [])).toBe(false);
    expect(verifyConsistency(1, 2, r, ROOTS[1]!, [])).toBe(false); // empty proof for a real step
    expect(verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT])).toBe(false); // non-empty where none is due
    expect(verifyConsistency(0, 1, EMPTY_ROOT, r, [EMPTY_ROOT])).toBe(false);
    expect(verifyConsistency(1, 1, r, r, [EMPTY_ROOT])).toBe(false);
  });
});
