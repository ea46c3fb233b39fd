// What the ledger proves about its Merkle tree (RFC 6962): that an entry is in a tree of a given
// size, and that a smaller tree is a prefix of a bigger one. Sizes are checked against the head, so
// a proof is never asked of a tree the ledger does not have.
import type Database from 'better-sqlite3';
import { WardenError } from '../../../shared/errors.js';
import type { TreeStore } from './tree-store.js';

export interface InclusionProofResult {
  seq: number;
  treeSize: number;
  leafHash: string;
  root: string;
  path: string[];
}

export interface ConsistencyProofResult {
  fromSize: number;
  toSize: number;
  fromRoot: string;
  toRoot: string;
  path: string[];
}

export function checkTreeSize(size: number, max: number): void {
  if (!Number.isSafeInteger(size) || size < 0 || size > max) throw new WardenError('E_BAD_INPUT', `tree size ${size} is outside 0..${max}`);
}

export function inclusionProof(db: Database.Database, tree: TreeStore, seq: number, treeSize: number): InclusionProofResult {
  if (!Number.isSafeInteger(seq) || seq < 1 || seq > treeSize)
    throw new WardenError('E_NOT_FOUND', `no entry ${seq} in a tree of ${treeSize}`);
  const path = tree.inclusion(seq - 1, treeSize).map((h) => h.toString('hex'));
  const leaf = db.prepare('SELECT hash FROM entries WHERE seq = ?').pluck().get(seq) as Buffer;
  return { seq, treeSize, leafHash: leaf.toString('hex'), root: tree.root(treeSize).toString('hex'), path };
}

export function consistencyProof(tree: TreeStore, fromSize: number, toSize: number): ConsistencyProofResult {
  if (!Number.isSafeInteger(fromSize) || fromSize < 0 || fromSize > toSize)
    throw new WardenError('E_BAD_INPUT', `no consistency proof from ${fromSize} to ${toSize}`);
  const path = tree.consistency(fromSize, toSize).map((h) => h.toString('hex'));
  return { fromSize, toSize, fromRoot: tree.root(fromSize).toString('hex'), toRoot: tree.root(toSize).toString('hex'), path };
}
