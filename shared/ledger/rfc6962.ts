// RFC 6962 / RFC 9162 proof verification, written once for every checker: the engine's offline bundle
// verifier (node:crypto, synchronous) and the Ledger view (WebCrypto, asynchronous). The walk of a
// proof — which side each path hash sits on, whether the path has the right length for the tree —
// depends only on the index and the sizes, never on hash values, so it is computed here without any
// hashing; the folds below apply whatever SHA-256 the caller injects. shared/ imports no crypto.

export type Bytes = Uint8Array;

/** Where a path hash sits against the running hash: `left` → H(0x01 ‖ path ‖ running), `right` → H(0x01 ‖ running ‖ path). */
export type Side = 'left' | 'right';

/** Why a proof cannot be one, in words a person can act on; null when its shape fits the tree. */
export type WalkProblem = string;

/** Proofs longer than this are refused before any work: a tree of 2^64 leaves needs 64. */
export const MAX_PATH = 64;

const odd = (x: number) => x % 2 === 1;
const half = (x: number) => Math.floor(x / 2);
const isSize = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/**
 * RFC 9162 §2.1.3.2 for leaf `index` of a tree of `size`, given a path of `pathLength` hashes: the side
 * of each path hash, or why no path of that length can prove that leaf in that tree.
 */
export function inclusionSides(index: number, size: number, pathLength: number): Side[] | WalkProblem {
  if (!isSize(index) || !isSize(size) || !isSize(pathLength)) return 'the index, tree size or path length is not a whole number';
  if (index >= size) return `leaf ${index} is outside a tree of ${size}`;
  if (pathLength > MAX_PATH) return `the path has ${pathLength} hashes; no tree needs more than ${MAX_PATH}`;
  const sides: Side[] = [];
  let fn = index;
  let sn = size - 1;
  for (let i = 0; i < pathLength; i++) {
    if (sn === 0) return `the path has ${pathLength} hashes; leaf ${index} of a tree of ${size} needs ${i}`;
    if (odd(fn) || fn === sn) {
      sides.push('left');
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sides.push('right');
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) return `the path has ${pathLength} hashes; leaf ${index} of a tree of ${size} needs more`;
  return sides;
}

/** How a consistency proof from `size1` to `size2` is walked (RFC 9162 §2.1.4.2), or why it cannot be one. */
export type ConsistencyWalk =
  | { kind: 'same' } // equal sizes: no path, equal roots
  | { kind: 'empty' } // from the empty tree: no path, anything extends it
  /** `seedIsRoot1`: the old tree is a complete subtree, so its root is the walk's first node. `both`: fold into both roots; `second`: only the new one. */
  | { kind: 'walk'; seedIsRoot1: boolean; steps: Array<'both' | 'second'> };

export function consistencyWalk(size1: number, size2: number, pathLength: number): ConsistencyWalk | WalkProblem {
  if (!isSize(size1) || !isSize(size2) || !isSize(pathLength)) return 'a size or the path length is not a whole number';
  if (size1 > size2) return `a tree of ${size1} cannot be a prefix of one of ${size2}`;
  if (pathLength > 2 * MAX_PATH) return `the path has ${pathLength} hashes; no tree needs more than ${2 * MAX_PATH}`;
  if (size1 === size2) return pathLength === 0 ? { kind: 'same' } : 'trees of equal size need an empty proof';
  if (size1 === 0) return pathLength === 0 ? { kind: 'empty' } : 'a proof from the empty tree is empty';
  if (pathLength === 0) return 'the proof is empty';
  const seedIsRoot1 = isPowerOfTwo(size1);
  const nodes = pathLength + (seedIsRoot1 ? 1 : 0);
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  const steps: Array<'both' | 'second'> = [];
  for (let i = 1; i < nodes; i++) {
    if (sn === 0) return `the proof is too long for sizes ${size1} and ${size2}`;
    if (odd(fn) || fn === sn) {
      steps.push('both');
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      steps.push('second');
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) return `the proof is too short for sizes ${size1} and ${size2}`;
  return { kind: 'walk', seedIsRoot1, steps };
}

function isPowerOfTwo(n: number): boolean {
  if (n < 1) return false;
  while (n % 2 === 0) n /= 2;
  return n === 1;
}

/** The interior-node input: 0x01 ‖ left ‖ right. Hash it with SHA-256 to get the node. */
export function nodeInput(left: Bytes, right: Bytes): Bytes {
  const out = new Uint8Array(1 + left.length + right.length);
  out[0] = 0x01;
  out.set(left, 1);
  out.set(right, 1 + left.length);
  return out;
}

/** The leaf input: 0x00 ‖ data. */
export function leafInput(data: Bytes): Bytes {
  const out = new Uint8Array(1 + data.length);
  out.set(data, 1);
  return out;
}

export type NodeHashSync = (left: Bytes, right: Bytes) => Bytes;
export type Sha256Async = (data: Bytes) => Promise<Bytes>;

/** The root an inclusion path leads to (sides from inclusionSides), hashing synchronously. */
export function inclusionRootSync(leaf: Bytes, path: readonly Bytes[], sides: readonly Side[], node: NodeHashSync): Bytes {
  let r = leaf;
  for (let i = 0; i < sides.length; i++) r = sides[i] === 'left' ? node(path[i]!, r) : node(r, path[i]!);
  return r;
}

/** The same walk with an asynchronous SHA-256 (WebCrypto). */
export async function inclusionRootAsync(leaf: Bytes, path: readonly Bytes[], sides: readonly Side[], sha256: Sha256Async): Promise<Bytes> {
  let r = leaf;
  for (let i = 0; i < sides.length; i++) r = await sha256(sides[i] === 'left' ? nodeInput(path[i]!, r) : nodeInput(r, path[i]!));
  return r;
}

/** The two roots a consistency walk leads to: [old tree's, new tree's]. */
export function consistencyRootsSync(
  walk: Extract<ConsistencyWalk, { kind: 'walk' }>,
  root1: Bytes,
  path: readonly Bytes[],
  node: NodeHashSync,
): [Bytes, Bytes] {
  const nodes = walk.seedIsRoot1 ? [root1, ...path] : [...path];
  let fr = nodes[0]!;
  let sr = nodes[0]!;
  walk.steps.forEach((step, i) => {
    const c = nodes[i + 1]!;
    if (step === 'both') {
      fr = node(c, fr);
      sr = node(c, sr);
    } else sr = node(sr, c);
  });
  return [fr, sr];
}

export function bytesEqual(a: Bytes, b: Bytes): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

const HEX = /^(?:[0-9a-f]{2})*$/;

/** Lower-case hex to bytes; null for anything else (odd length, upper case, other characters). */
export function fromHex(hex: string): Bytes | null {
  if (typeof hex !== 'string' || !HEX.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function toHex(bytes: Bytes): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}
