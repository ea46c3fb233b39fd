// The inner loop of verification over one range of entries: recompute every entry hash, check the
// chain, and fold the leaves into Merkle subtrees. It runs in this thread for small ledgers and in
// worker threads for large ones; for the latter its source text is shipped to the worker, so this
// function must stay self-contained: no imports, no module-level names, no nested named functions.
import type { Database } from 'better-sqlite3';

export interface RangeTask {
  /** First and last seq of the range; from − 1 is a multiple of the range size (a power of two). */
  from: number;
  to: number;
  /** Checkpoint sizes inside [from, to] whose roots are wanted. */
  checkpointSizes: number[];
  pageSize: number;
}

export interface RangeAnomaly {
  seq: number;
  kind: 'seq' | 'hash' | 'link';
  /** For 'seq': the seq found where `seq` was expected (null: rows ran out). */
  got?: number | null;
}

/** Complete subtrees as [level, hex hash], largest first. */
export type Nodes = Array<[number, string]>;

export interface RangeResult {
  from: number;
  to: number;
  /** Entries verified before any anomaly. */
  count: number;
  /** Stored prev_hash of entry `from` (checked by the caller against the previous range). */
  firstPrev: string | null;
  lastHash: string | null;
  anomaly: RangeAnomaly | null;
  nodes: Nodes;
  at: Array<{ size: number; nodes: Nodes }>;
}

export type HexDigest = (algorithm: string, data: string | Buffer) => string;

export function verifyRange(db: Database, digest: HexDigest, task: RangeTask): RangeResult {
  // hex() without lower(): reading rows is most of the cost, and this saves ~15% of it. Stored
  // hashes are compared upper-case; the canonical text always carries lower-case hex.
  const stmt = db
    .prepare(
      'SELECT seq, time, actor, sandbox_id, kind, payload, hex(prev_hash), hex(hash) FROM entries WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT ?',
    )
    .raw(true);
  const levels: number[] = [];
  const hashes: string[] = [];
  const node = Buffer.alloc(65);
  node[0] = 1;
  const at: Array<{ size: number; nodes: Nodes }> = [];
  let cpIndex = 0;
  let expect = task.from;
  let prev: string | null = null; // computed hash of the previous entry (lower-case)
  let prevStored = ''; // its stored hash (upper-case), equal to prev once checked
  let firstPrev: string | null = null;
  let anomaly: RangeAnomaly | null = null;
  let cursor = task.from;
  // The JSON text of actor, kind, sandbox and time as of the previous row: consecutive entries often
  // share them (a batch's time, a run's actor and sandbox), and reusing the text saves ~3% per entry.
  let lastActor = '';
  let actorJson = '""';
  let lastKind = '';
  let kindJson = '""';
  let lastSandbox = '';
  let sandboxJson = '""';
  let lastTime = '';
  let timeJson = '""';

  pages: while (cursor <= task.to) {
    const rows = stmt.all(cursor, task.to, task.pageSize) as unknown[][];
    for (const row of rows) {
      const seq = row[0];
      if (seq !== expect) {
        anomaly = { seq: expect, kind: 'seq', got: typeof seq === 'number' ? seq : null };
        break pages;
      }
      const time = row[1];
      const actor = row[2];
      const sandbox = row[3];
      const kind = row[4];
      const payload = row[5];
      const prevUpper = row[6] as string;
      const stored = row[7] as string;
      if (
        typeof time !== 'string' ||
        typeof actor !== 'string' ||
        typeof kind !== 'string' ||
        typeof payload !== 'string' ||
        (sandbox !== null && typeof sandbox !== 'string')
      ) {
        anomaly = { seq, kind: 'hash' };
        break pages;
      }
      // The stored prev_hash goes into the text; while the chain holds it is the previous hash.
      const linked = prev !== null && prevUpper === prevStored;
      const prevHash = linked ? (prev as string) : prevUpper.toLowerCase();
      if (actor !== lastActor) {
        lastActor = actor;
        actorJson = JSON.stringify(actor);
      }
      if (kind !== lastKind) {
        lastKind = kind;
        kindJson = JSON.stringify(kind);
      }
      if (sandbox !== null && sandbox !== lastSandbox) {
        lastSandbox = sandbox;
        sandboxJson = JSON.stringify(sandbox);
      }
      if (time !== lastTime) {
        lastTime = time;
        timeJson = JSON.stringify(time);
      }
      // Same text as canonical.ts entryCanonical(); a test holds the two together.
      const text =
        '\u0000{"actor":' +
        actorJson +
        ',"kind":' +
        kindJson +
        ',"payload":' +
        payload +
        ',"prev_hash":"' +
        prevHash +
        '","sandbox_id":' +
        (sandbox === null ? 'null' : sandboxJson) +
        ',"seq":' +
        seq +
        ',"time":' +
        timeJson +
        '}';
      const h = digest('sha256', text);
      if (h.toUpperCase() !== stored) {
        anomaly = { seq, kind: 'hash' };
        break pages;
      }
      if (prev === null) firstPrev = prevHash;
      else if (!linked) {
        anomaly = { seq, kind: 'link' };
        break pages;
      }
      prevStored = stored;
      // Fold the leaf into the frontier of complete subtrees.
      let cur = h;
      let lvl = 0;
      while (levels.length > 0 && levels[levels.length - 1] === lvl) {
        node.write(hashes.pop() as string, 1, 'hex');
        node.write(cur, 33, 'hex');
        cur = digest('sha256', node);
        levels.pop();
        lvl += 1;
      }
      levels.push(lvl);
      hashes.push(cur);
      while (cpIndex < task.checkpointSizes.length && (task.checkpointSizes[cpIndex] as number) <= seq) {
        if (task.checkpointSizes[cpIndex] === seq) at.push({ size: seq, nodes: levels.map((l, i) => [l, hashes[i] as string]) });
        cpIndex += 1;
      }
      prev = h;
      expect += 1;
    }
    if (rows.length < task.pageSize) break;
    cursor = expect;
  }
  if (anomaly === null && expect !== task.to + 1) anomaly = { seq: expect, kind: 'seq', got: null };
  return {
    from: task.from,
    to: task.to,
    count: expect - task.from,
    firstPrev,
    lastHash: prev,
    anomaly,
    nodes: levels.map((l, i) => [l, hashes[i] as string]),
    at,
  };
}
