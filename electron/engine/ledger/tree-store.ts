// The Merkle tree over the entries, stored as a cache of complete subtrees of 2^8 leaves and up.
//
// The entry hash is already the RFC 6962 leaf hash, so the leaves are the `hash` column. Nodes below
// 256 leaves are recomputed on demand from one chunk of entries (≤ 255 hashes); nodes at and above
// it are looked up. A proof in a 1,000,000-entry tree is then ~12 lookups plus one chunk.
//
// The cache is filled lazily (`extend`), not on the append path: appends pay only for the chain, and
// the tree catches up when a root or proof is needed (checkpoints, exports) in short transactions.
import type { Database, Statement } from 'better-sqlite3';
import { WardenError } from '../../../shared/errors.js';
import { consistencyPath, inclusionPath, nodeHash, rootOf, splitPoint, EMPTY_ROOT, type Hash } from './merkle.js';

export const CHUNK_LEVEL = 8;
export const CHUNK = 2 ** CHUNK_LEVEL;
const CHUNKS_PER_TX = 64;

export class TreeStore {
  private readonly getNode: Statement<[number, number]>;
  private readonly putNode: Statement<[number, number, Buffer]>;
  private readonly lastChunk: Statement<[]>;
  private readonly leafRange: Statement<[number, number]>;

  constructor(private readonly db: Database) {
    this.getNode = db.prepare('SELECT hash FROM tree_nodes WHERE level = ? AND idx = ?').pluck();
    this.putNode = db.prepare('INSERT INTO tree_nodes (level, idx, hash) VALUES (?, ?, ?)');
    this.lastChunk = db.prepare(`SELECT MAX(idx) FROM tree_nodes WHERE level = ${CHUNK_LEVEL}`).pluck();
    this.leafRange = db.prepare('SELECT hash FROM entries WHERE seq > ? AND seq <= ? ORDER BY seq').pluck();
  }

  /** Number of leaves whose chunks are cached. */
  cachedLeaves(): number {
    const last = this.lastChunk.get() as number | null;
    return last === null ? 0 : (last + 1) * CHUNK;
  }

  /** Caches every complete chunk inside the first `size` leaves; returns how many chunks it added. */
  extend(size: number): number {
    const chunks = Math.floor(size / CHUNK);
    let next = this.cachedLeaves() / CHUNK;
    let added = 0;
    while (next < chunks) {
      const upto = Math.min(chunks, next + CHUNKS_PER_TX);
      const from = next;
      this.db
        .transaction(() => {
          for (let c = from; c < upto; c++) added += this.addChunk(c);
        })
        .immediate();
      next = upto;
    }
    return added;
  }

  private addChunk(c: number): number {
    if (this.getNode.get(CHUNK_LEVEL, c)) return 0; // another process got here first
    const leaves = this.leaves(c * CHUNK, (c + 1) * CHUNK);
    let level = CHUNK_LEVEL;
    let idx = c;
    let hash = rootOf(leaves);
    this.put(level, idx, hash);
    // A right child completes its parent: climb while we are one.
    while (idx % 2 === 1) {
      hash = nodeHash(this.node(level, idx - 1), hash);
      level += 1;
      idx = (idx - 1) / 2;
      this.put(level, idx, hash);
    }
    return 1;
  }

  private put(level: number, idx: number, hash: Hash): void {
    const existing = this.getNode.get(level, idx) as Buffer | undefined;
    if (existing) {
      // Entries never change, so neither can a node derived from them: a difference is tampering.
      if (!existing.equals(hash))
        throw new WardenError(
          'E_LEDGER',
          `the cached Merkle node (${level}, ${idx}) disagrees with the entries`,
          'run `warden audit verify`',
        );
      return;
    }
    this.putNode.run(level, idx, hash);
  }

  private node(level: number, idx: number): Hash {
    const h = this.getNode.get(level, idx) as Buffer | undefined;
    if (!h) throw new WardenError('E_LEDGER', `Merkle node (${level}, ${idx}) is missing from the cache`);
    return h;
  }

  /** Leaf hashes of entries [start, end) (0-based leaf indexes). */
  private leaves(start: number, end: number): Hash[] {
    const rows = this.leafRange.all(start, end) as Buffer[];
    if (rows.length !== end - start || rows.some((r) => !Buffer.isBuffer(r) || r.length !== 32)) {
      throw new WardenError('E_LEDGER', `entries ${start + 1}..${end} are missing or malformed`, 'run `warden audit verify`');
    }
    return rows;
  }

  /** MTH(D[start:end]) from cached nodes where they exist, from leaves below a chunk. */
  private subtree(start: number, end: number, chunkMemo: Map<number, Hash[]>): Hash {
    const len = end - start;
    if (len === 0) return EMPTY_ROOT;
    if (len <= CHUNK && Math.floor(start / CHUNK) === Math.floor((end - 1) / CHUNK)) {
      // Ranges the RFC recursion produces never straddle a chunk once they are this small.
      const c = Math.floor(start / CHUNK);
      let leaves = chunkMemo.get(c);
      if (!leaves || leaves.length < end - c * CHUNK) {
        leaves = this.leaves(c * CHUNK, Math.min((c + 1) * CHUNK, this.sizeLimit));
        chunkMemo.set(c, leaves);
      }
      if (len === CHUNK) {
        const cached = this.getNode.get(CHUNK_LEVEL, c) as Buffer | undefined;
        if (cached) return cached;
      }
      return rootOf(leaves.slice(start - c * CHUNK, end - c * CHUNK));
    }
    if ((len & (len - 1)) === 0 && start % len === 0) return this.node(Math.log2(len), start / len);
    const k = splitPoint(len);
    return nodeHash(this.subtree(start, start + k, chunkMemo), this.subtree(start + k, end, chunkMemo));
  }

  // Bounds leaf reads of the last, incomplete chunk to the tree size being asked about.
  private sizeLimit = 0;

  private withSize<T>(size: number, fn: (sub: (s: number, e: number) => Hash) => T): T {
    this.extend(size);
    this.sizeLimit = size;
    const memo = new Map<number, Hash[]>();
    return fn((s, e) => this.subtree(s, e, memo));
  }

  root(size: number): Hash {
    if (size === 0) return EMPTY_ROOT;
    return this.withSize(size, (sub) => sub(0, size));
  }

  inclusion(index: number, size: number): Hash[] {
    return this.withSize(size, (sub) => inclusionPath(index, size, sub));
  }

  consistency(fromSize: number, toSize: number): Hash[] {
    return this.withSize(toSize, (sub) => consistencyPath(fromSize, toSize, sub));
  }
}
