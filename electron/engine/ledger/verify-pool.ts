// Runs range verification on worker threads while keeping verify() synchronous: the workers claim
// ranges from a shared counter, post results on a MessagePort, and this thread sleeps on
// Atomics.wait and drains the ports with receiveMessageOnPort. Reading rows out of SQLite costs as
// much as hashing them, so one thread tops out near 300k entries/s; two cores roughly double it.
//
// The worker is built from verifyRange's own source text (eval: true) because the CLI ships as one
// bundled file: there is no separate worker file to point at.
import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { WardenError } from '../../../shared/errors.js';
import { verifyRange, type RangeResult, type RangeTask } from './verify-range.js';

const WORKER_SOURCE = `'use strict';
const { workerData } = require('node:worker_threads');
const { hash } = require('node:crypto');
const __name = (f) => f; // esbuild's keepNames helper, should a loader have added it to the source
const verifyRange = (${verifyRange.toString()});
const { port, shared, file, sqlitePath, tasks } = workerData;
const counters = new Int32Array(shared);
const done = () => { Atomics.add(counters, 1, 1); Atomics.notify(counters, 1); };
let db = null;
try {
  const Database = require(sqlitePath);
  db = new Database(file, { readonly: true, fileMustExist: true });
  for (;;) {
    const i = Atomics.add(counters, 0, 1);
    if (i >= tasks.length) break;
    try {
      port.postMessage({ i, result: verifyRange(db, hash, tasks[i]) });
    } catch (err) {
      port.postMessage({ i, error: String((err && err.message) || err) });
    }
    done();
  }
} catch (err) {
  port.postMessage({ i: -1, error: String((err && err.message) || err) });
  done();
} finally {
  if (db) db.close();
  port.close();
}
`;

type Message = { i: number; result?: RangeResult; error?: string };

const STALL_MS = 120_000;

export function runInWorkers(
  file: string,
  tasks: RangeTask[],
  workers: number,
  onResult: (done: number) => void,
  inThread: (task: RangeTask) => RangeResult,
): RangeResult[] {
  const shared = new SharedArrayBuffer(8);
  const counters = new Int32Array(shared);
  const sqlitePath = createRequire(import.meta.url).resolve('better-sqlite3');
  const ports: MessagePort[] = [];
  const threads: Worker[] = [];
  for (let w = 0; w < workers; w++) {
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { port: port2, shared, file, sqlitePath, tasks }, transferList: [port2] });
    worker.unref();
    worker.on('error', () => {
      // Reported through the port when possible; a crash shows up as a stall or a fallback below.
    });
    ports.push(port1);
    threads.push(worker);
  }
  const results: Array<RangeResult | undefined> = new Array(tasks.length);
  let received = 0;
  let deadWorkers = 0;
  let lastProgress = Date.now();
  try {
    while (received < tasks.length && deadWorkers < workers) {
      const seen = Atomics.load(counters, 1);
      for (const port of ports) {
        for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
          const msg = m.message as Message;
          lastProgress = Date.now();
          if (msg.i < 0) {
            deadWorkers += 1;
            continue;
          }
          received += 1;
          if (msg.result) results[msg.i] = msg.result; // an error leaves it for the in-thread rerun
          onResult(received);
        }
      }
      if (received >= tasks.length || deadWorkers >= workers) break;
      if (Date.now() - lastProgress > STALL_MS) throw new WardenError('E_INTERNAL', 'ledger verification workers stopped responding');
      Atomics.wait(counters, 1, seen, 250);
    }
  } finally {
    for (const port of ports) port.close();
    for (const t of threads) void t.terminate();
  }
  // Whatever the workers could not do (no worker could start, or a range threw) runs here, where a
  // real error surfaces with its own message.
  return tasks.map((task, i) => results[i] ?? inThread(task));
}
