// Runs range verification on worker threads: the workers claim ranges from a shared counter and post
// results on a MessagePort. verify() stays synchronous (this thread sleeps on Atomics.wait and drains
// the ports with receiveMessageOnPort); verifyAsync() takes the same messages on the event loop.
// Reading rows out of SQLite costs as much as hashing them, so one thread tops out near 300k
// entries/s; two cores roughly double it.
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

/** Workers started on a list of ranges, and what they reported so far; both drivers below share it. */
class WorkerRun {
  readonly counters: Int32Array;
  readonly ports: MessagePort[] = [];
  readonly threads: Worker[] = [];
  private readonly results: Array<RangeResult | undefined>;
  private received = 0;
  private deadWorkers = 0;
  lastProgress = Date.now();

  constructor(
    file: string,
    private readonly tasks: RangeTask[],
    private readonly workers: number,
    private readonly onResult: (done: number) => void,
  ) {
    const shared = new SharedArrayBuffer(8);
    this.counters = new Int32Array(shared);
    this.results = new Array<RangeResult | undefined>(tasks.length);
    const sqlitePath = createRequire(import.meta.url).resolve('better-sqlite3');
    for (let w = 0; w < workers; w++) {
      const { port1, port2 } = new MessageChannel();
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { port: port2, shared, file, sqlitePath, tasks },
        transferList: [port2],
      });
      worker.unref();
      worker.on('error', () => {
        // Reported through the port when possible; a crash shows up as a stall or a fallback below.
      });
      this.ports.push(port1);
      this.threads.push(worker);
    }
  }

  get finished(): boolean {
    return this.received >= this.tasks.length || this.deadWorkers >= this.workers;
  }

  /** Takes whatever is queued on the ports now, without waiting. */
  drain(): void {
    for (const port of this.ports) {
      for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) this.take(m.message as Message);
    }
  }

  take(msg: Message): void {
    this.lastProgress = Date.now();
    if (msg.i < 0) {
      this.deadWorkers += 1;
      return;
    }
    this.received += 1;
    if (msg.result) this.results[msg.i] = msg.result; // an error leaves it for the in-thread rerun
    this.onResult(this.received);
  }

  checkStall(): void {
    if (Date.now() - this.lastProgress > STALL_MS) throw new WardenError('E_INTERNAL', 'ledger verification workers stopped responding');
  }

  stop(): void {
    for (const port of this.ports) port.close();
    for (const t of this.threads) void t.terminate();
  }

  /** Ranges no worker could do (none could start, or a range threw), to be rerun where a real error surfaces. */
  missing(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.tasks.length; i++) if (!this.results[i]) out.push(i);
    return out;
  }

  collect(rerun: Map<number, RangeResult>): RangeResult[] {
    return this.tasks.map((_, i) => this.results[i] ?? rerun.get(i)!);
  }
}

/** Blocks this thread until the workers are done: it sleeps on Atomics.wait and drains the ports. */
export function runInWorkers(
  file: string,
  tasks: RangeTask[],
  workers: number,
  onResult: (done: number) => void,
  inThread: (task: RangeTask) => RangeResult,
): RangeResult[] {
  const run = new WorkerRun(file, tasks, workers, onResult);
  try {
    while (!run.finished) {
      const seen = Atomics.load(run.counters, 1);
      run.drain();
      if (run.finished) break;
      run.checkStall();
      Atomics.wait(run.counters, 1, seen, 250);
    }
  } finally {
    run.stop();
  }
  const rerun = new Map<number, RangeResult>();
  for (const i of run.missing()) rerun.set(i, inThread(tasks[i]!));
  return run.collect(rerun);
}

/**
 * The same without blocking: results arrive as port messages on the event loop, and this thread is
 * free meanwhile (the HTTP API and every UI socket of `warden serve` keep answering).
 */
export async function runInWorkersAsync(
  file: string,
  tasks: RangeTask[],
  workers: number,
  onResult: (done: number) => void,
  inThread: (task: RangeTask) => RangeResult,
): Promise<RangeResult[]> {
  const run = new WorkerRun(file, tasks, workers, onResult);
  let stall: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let exited = 0;
      for (const port of run.ports) {
        port.on('message', (msg: Message) => {
          run.take(msg);
          if (run.finished) resolve();
        });
      }
      for (const t of run.threads) {
        // A worker that dies without a word (out of memory, killed) would otherwise wait for the
        // stall timer: once all are gone, take what they left queued and rerun the rest here.
        t.once('exit', () => {
          exited += 1;
          if (exited < run.threads.length) return;
          run.drain();
          resolve();
        });
      }
      stall = setInterval(() => {
        try {
          run.checkStall();
        } catch (err) {
          reject(err as Error);
        }
      }, 1000);
    });
  } finally {
    clearInterval(stall);
    run.stop();
  }
  const rerun = new Map<number, RangeResult>();
  for (const i of run.missing()) {
    rerun.set(i, inThread(tasks[i]!));
    await new Promise((r) => setImmediate(r));
  }
  return run.collect(rerun);
}
