// A child process for the multi-process and crash specs: appends through every path (append,
// appendBatch, enqueue) and prints "seq hash" for each entry only after the call acknowledged it.
//
//   node writer.mjs <ledger file> <key dir> <iterations|forever> <tag> [wait-for-go]
import { readSync, writeSync } from 'node:fs';
import { Ledger } from '../engine/ledger/ledger.js';
import type { LedgerEntry } from '../../shared/types/ledger.js';

const [file, keyDir, iterations, tag, barrier] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const forever = iterations === 'forever';
// Scheduled checkpoints every 20 ms in crash runs, so kills also land inside checkpoint writes.
const ledger = Ledger.open(file, { keyDir, checkpointEveryMs: forever ? 20 : 0, checkpointOnClose: false });

function ack(e: LedgerEntry): void {
  // Synchronous write: once this returns the parent can read the line, even if we die next.
  writeSync(1, `${e.seq} ${e.hash}\n`);
}

const entry = (i: number, j = 0) => ({
  actor: `writer-${tag}`,
  sandboxId: `sb-${tag}`,
  kind: 'exec.finished',
  payload: { tag, i, j, exit: i % 3, stdout: { size: i * 7, preview: `run ${i}.${j}` } },
});

writeSync(1, 'ready\n');
if (barrier === 'wait-for-go') readSync(0, Buffer.alloc(3)); // the parent writes "go" to every child at once

const n = forever ? Number.POSITIVE_INFINITY : Number(iterations);
for (let i = 0; i < n; i++) {
  switch (i % 3) {
    case 0:
      ack(ledger.append(entry(i)));
      break;
    case 1:
      ledger.appendBatch([entry(i, 0), entry(i, 1), entry(i, 2)]).forEach(ack);
      break;
    default:
      (await Promise.all([0, 1, 2, 3].map((j) => ledger.enqueue(entry(i, j))))).forEach(ack);
  }
  // Writers also sign checkpoints now and then, racing each other for the checkpoint file. In crash
  // runs each one is acknowledged with its size, so the parent can kill right after one (and check
  // that it survived) instead of hoping a timer fired before the kill.
  if (i % 30 === 29) {
    const cp = ledger.checkpoint();
    if (forever && cp) writeSync(1, `checkpoint ${cp.size}\n`);
  }
}
ledger.close();
