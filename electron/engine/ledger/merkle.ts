// RFC 6962 / RFC 9162 Merkle tree hashing: proof generation over any subtree-hash source, and proof
// verification written for hostile input (every size, index and path element is checked).
import { createHash } from 'node:crypto';
import {
  bytesEqual,
  consistencyRootsSync,
  consistencyWalk,
  inclusionRootSync,
  inclusionSides,
  MAX_PATH,
  type Bytes,
} from '../../../shared/ledger/rfc6962.js';

export type Hash = Buffer;

const LEAF = Buffer.from([0x00]);
const NODE = Buffer.from([0x01]);

export const EMPTY_ROOT: Hash = createHash('sha256').digest();

export function leafHash(data: Uint8Array): Hash {
  return createHash('sha256').update(LEAF).update(data).digest();
}

export function nodeHash(left: Bytes, right: Bytes): Hash {
  return createHash('sha256').update(NODE).update(left).update(right).digest();
}

function isHash(value: unknown): value is Hash {
  return Buffer.isBuffer(value) && value.length === 32;
}

function isSize(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** Largest power of two strictly below n (n ≥ 2): the split point k of RFC 6962 §2.1. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH over leaf hashes already in memory (used for small subtrees and as the reference in tests). */
export function rootOf(leaves: readonly Hash[]): Hash {
  if (leaves.length === 0) return EMPTY_ROOT;
  const f = new Frontier();
  for (const leaf of leaves) f.push(leaf);
  return f.root();
}

/**
 * The right edge of a tree being built left to right: the complete subtrees that cover [0, size),
 * largest first. Memory is O(log n), which is what keeps verification flat as the ledger grows.
 */
export class Frontier {
  private readonly hashes: Hash[] = [];
  private readonly levels: number[] = [];
  size = 0;

  push(leaf: Hash): void {
    this.pushSubtree(0, leaf);
  }

  /** Adds a complete subtree of 2^level leaves; the caller keeps it aligned (size a multiple of 2^level). */
  pushSubtree(level: number, hash: Hash): void {
    let h = hash;
    let lvl = level;
    while (this.levels.length && this.levels[this.levels.length - 1] === lvl) {
      h = nodeHash(this.hashes.pop()!, h);
      this.levels.pop();
      lvl += 1;
    }
    this.hashes.push(h);
    this.levels.push(lvl);
    this.size += 2 ** level;
  }

  root(): Hash {
    if (this.hashes.length === 0) return EMPTY_ROOT;
    let r = this.hashes[this.hashes.length - 1]!;
    for (let i = this.hashes.length - 2; i >= 0; i--) r = nodeHash(this.hashes[i]!, r);
    return r;
  }
}

/** MTH(D[start:end]) provider; implementations may read a cache or compute from leaves. */
export type SubtreeHash = (start: number, end: number) => Hash;

/** RFC 6962 §2.1.1 PATH(m, D[n]), leaf to root. */
export function inclusionPath(index: number, size: number, sub: SubtreeHash): Hash[] {
  if (!isSize(index) || !isSize(size) || index >= size) throw new RangeError(`no leaf ${index} in a tree of ${size}`);
  const outerFirst: Hash[] = [];
  let start = 0;
  let end = size;
  let m = index;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (m < k) {
      outerFirst.push(sub(start + k, end));
      end = start + k;
    } else {
      outerFirst.push(sub(start, start + k));
      start += k;
      m -= k;
    }
  }
  return outerFirst.reverse();
}

/** RFC 6962 §2.1.2 PROOF(m, D[n]): that the tree of size m is a prefix of the tree of size n. */
export function consistencyPath(m: number, n: number, sub: SubtreeHash): Hash[] {
  if (!isSize(m) || !isSize(n) || m > n) throw new RangeError(`no consistency proof from ${m} to ${n}`);
  if (m === 0 || m === n) return [];
  const outerFirst: Hash[] = [];
  let start = 0;
  let end = n;
  let mm = m;
  let whole = true; // SUBPROOF's b: true while the old tree's root is still a node of this subtree
  for (;;) {
    const len = end - start;
    if (mm === len) {
      if (!whole) outerFirst.push(sub(start, end));
      break;
    }
    const k = splitPoint(len);
    if (mm <= k) {
      outerFirst.push(sub(start + k, end));
      end = start + k;
    } else {
      outerFirst.push(sub(start, start + k));
      start += k;
      mm -= k;
      whole = false;
    }
  }
  return outerFirst.reverse();
}

/** RFC 9162 §2.1.3.2 (the walk is shared/ledger/rfc6962.ts, the page's too). False for anything malformed: the input is a peer's. */
export function verifyInclusion(leaf: Hash, index: number, size: number, path: readonly Hash[], root: Hash): boolean {
  if (!isHash(leaf) || !isHash(root) || !isSize(index) || !isSize(size) || !Array.isArray(path)) return false;
  if (path.length > MAX_PATH || !path.every(isHash)) return false;
  const sides = inclusionSides(index, size, path.length);
  if (typeof sides === 'string') return false;
  return bytesEqual(inclusionRootSync(leaf, path, sides, nodeHash), root);
}

/** RFC 9162 §2.1.4.2, with the trivial cases (equal sizes, empty first tree) made explicit. */
export function verifyConsistency(size1: number, size2: number, root1: Hash, root2: Hash, path: readonly Hash[]): boolean {
  if (!isSize(size1) || !isSize(size2) || !isHash(root1) || !isHash(root2) || !Array.isArray(path)) return false;
  if (path.length > 2 * MAX_PATH || !path.every(isHash)) return false;
  const walk = consistencyWalk(size1, size2, path.length);
  if (typeof walk === 'string') return false;
  if (walk.kind === 'same') return root1.equals(root2);
  if (walk.kind === 'empty') return true;
  const [fr, sr] = consistencyRootsSync(walk, root1, path, nodeHash);
  return bytesEqual(fr, root1) && bytesEqual(sr, root2);
}
