// Builds ledger-writer.ts into a plain .mjs once per spec file, so each child starts in ~50 ms with
// plain node (a TypeScript loader would cost ~300 ms a child, too slow for 200 crash runs).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Returns the built script; remove its directory (dirname) when done. */
export async function buildWriter(): Promise<string> {
  // Inside the repository so `better-sqlite3` resolves from its node_modules.
  const base = `${root}node_modules/.cache/warden-ledger-tests`;
  mkdirSync(base, { recursive: true });
  const out = `${mkdtempSync(`${base}/writer-`)}/writer.mjs`;
  await build({
    entryPoints: [fileURLToPath(new URL('./ledger-writer.ts', import.meta.url))],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return out;
}

export interface Acks {
  child: ChildProcess;
  /** seq → hash of every entry the child acknowledged. */
  acked: Map<number, string>;
  /** Sizes of the checkpoints the child acknowledged. */
  checkpoints: number[];
  ready: Promise<void>;
  /** Resolves once `done()` holds after a line from the child, or when the child has exited. */
  until(done: () => boolean): Promise<void>;
  exited: Promise<number | null>;
}

export function runWriter(writer: string, args: string[]): Acks {
  const child = spawn(process.execPath, [writer, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const acked = new Map<number, string>();
  const checkpoints: number[] = [];
  const waiters = new Set<{ done: () => boolean; resolve: () => void }>();
  const wake = (all = false) => {
    for (const w of waiters) {
      if (all || w.done()) {
        waiters.delete(w);
        w.resolve();
      }
    }
  };
  let buffer = '';
  let stderr = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line === 'ready') onReady();
      else if (line.startsWith('checkpoint ')) checkpoints.push(Number(line.slice(11)));
      else {
        const [seq, hash] = line.split(' ');
        acked.set(Number(seq), hash!);
      }
    }
    wake();
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      if (code !== 0 && code !== null && stderr) process.stderr.write(stderr);
      wake(true);
      resolve(code);
    }),
  );
  const until = (done: () => boolean) => (done() ? Promise.resolve() : new Promise<void>((resolve) => waiters.add({ done, resolve })));
  return { child, acked, checkpoints, ready, exited, until };
}
