// Warden's connections to an `egress` sandbox's destinations, made by a dialer process of the
// runner binary (resources/runner/dialer.c) that sits in the sandbox's memory cgroup. The kernel
// charges a socket's buffers to the cgroup of the process that made it: made here, in Warden's
// process, the destination side of a sandbox's connections (up to 4 MiB each, orphans included)
// counted in no bound, and one sandbox holding its 256 connections stalled could pin a gigabyte of
// the host's TCP memory. Made by the dialer, they count in the sandbox's own bound (tcp-memory.ts).
// Where no dialer can run (no runner binary or addon, a cgroup Warden may not join), they are
// made here as before (dialHere), and `warden doctor` says so.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, writeFileSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { createInterface } from 'node:readline';
import type { Duplex } from 'node:stream';
import { joinSandboxMemory } from '../podman/tcp-memory.js';
import { loadAddon, type Addon } from './hand-over.js';

/** A connected socket to a decided, resolved destination; rejects as Node's connect would. */
export type Dial = (address: string, port: number) => Promise<Socket>;

/** How long a destination may take to answer a connect. */
export const CONNECT_WAIT_MS = 30_000;

const noAnswer = (address: string) => new Error(`no answer from ${address} in ${CONNECT_WAIT_MS / 1000} s`);

/** A connect from this process: where no dialer runs. */
export const dialHere: Dial = (address, port) =>
  new Promise((resolve, reject) => {
    const socket = connect({ host: address, port });
    socket.setTimeout(CONNECT_WAIT_MS, () => socket.destroy(noAnswer(address)));
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.setTimeout(0);
      resolve(socket);
    });
  });

/**
 * Not the one its sandbox's out-of-memory killer picks (the sandbox would lose its way out), where
 * this process may say so (CAP_SYS_RESOURCE: not every root has it). Were it picked, the next
 * connection starts another (egress-registry.ts).
 */
function avoidOomKiller(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/oom_score_adj`, '-1000');
  } catch {
    /* said above */
  }
}

/**
 * The destination's socket for a decided connection, or null once the connection has ended: the
 * client left while it was dialled (the socket, come late, is closed), or the dial failed, which
 * `failed` answers the client with, the reason recorded as the connection's end.
 */
export async function dialDecided(
  dial: Dial,
  address: string,
  port: number,
  client: Duplex,
  ended: (why: string) => void,
  failed: (why: string) => void,
): Promise<Socket | null> {
  const clientGone = () => ended('the client went away');
  client.once('close', clientGone);
  try {
    const upstream = await dial(address, port);
    if (!client.destroyed) return upstream;
    upstream.destroy();
    return null;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = `${err.code ?? 'error'}: ${err.message}`;
    if (!client.destroyed) failed(why);
    ended(why);
    return null;
  } finally {
    client.off('close', clientGone);
  }
}

interface Waiting {
  address: string;
  port: number;
  resolve: (s: Socket) => void;
  reject: (e: Error) => void;
}

export class SandboxDialer {
  private readonly waiting = new Map<string, Waiting>();
  private nextId = 1;
  private ended = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly ours: number,
    private readonly addon: Addon,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.answer(line));
    child.once('close', () => this.end(new Error('the egress dialer ended')));
    child.stdin!.on('error', () => undefined);
  }

  /** Starts one in the sandbox's memory cgroup; null (and why) where it cannot be. */
  static open(runner: string | null, sandboxPid: number): { dialer: SandboxDialer } | { why: string } {
    const addon = loadAddon();
    if (!runner || !addon) return { why: runner ? 'the hand-over addon is not built' : 'the runner binary is not built' };
    const [ours, theirs] = addon.descriptorPair();
    const child = spawn(runner, ['egress-dialer', String(CONNECT_WAIT_MS), String(sandboxPid)], {
      stdio: ['pipe', 'pipe', 'ignore', theirs],
    });
    closeSync(theirs);
    try {
      if (child.pid === undefined) throw new Error('it did not start');
      // Before its first request, so its first socket is the sandbox's already.
      joinSandboxMemory(sandboxPid, child.pid);
      avoidOomKiller(child.pid);
    } catch (err) {
      child.kill('SIGKILL');
      closeSync(ours);
      return { why: (err as Error).message };
    }
    // Serving a sandbox must not keep a one-shot process (the CLI) alive.
    child.unref();
    for (const s of [child.stdin, child.stdout] as unknown as Array<{ unref?: () => void }>) s.unref?.();
    return { dialer: new SandboxDialer(child, ours, addon) };
  }

  get alive(): boolean {
    return !this.ended;
  }

  dial: Dial = (address, port) => {
    if (this.ended) return Promise.reject(new Error('the egress dialer ended'));
    const id = (this.nextId++).toString(36);
    return new Promise<Socket>((resolve, reject) => {
      this.waiting.set(id, { address, port, resolve, reject });
      this.child.stdin!.write(`${id} ${address} ${port}\n`);
    });
  };

  private answer(line: string): void {
    const [id = '', verdict, code, ...text] = line.split(' ');
    const waiting = this.waiting.get(id);
    this.waiting.delete(id);
    if (verdict === 'ok') {
      // Sent before its line: one message waits, with the socket.
      const taken = this.addon.takeDescriptor(this.ours);
      if (taken && taken.fd >= 0 && (taken.id !== id || !waiting)) closeSync(taken.fd);
      if (!waiting) return;
      if (!taken || taken.id !== id || taken.fd < 0) return waiting.reject(new Error('the egress dialer sent no socket'));
      return waiting.resolve(new Socket({ fd: taken.fd, readable: true, writable: true }));
    }
    if (!waiting) return;
    if (code === 'ETIMEDOUT') return waiting.reject(noAnswer(waiting.address));
    const err: NodeJS.ErrnoException = new Error(`connect ${code} ${waiting.address}:${waiting.port} (${text.join(' ')})`);
    err.code = code;
    waiting.reject(err);
  }

  private end(why: Error): void {
    if (this.ended) return;
    this.ended = true;
    for (const w of this.waiting.values()) w.reject(why);
    this.waiting.clear();
    closeSync(this.ours);
  }

  close(): void {
    this.child.stdin!.end();
    this.child.kill('SIGKILL');
    this.end(new Error('the sandbox stopped'));
  }
}
