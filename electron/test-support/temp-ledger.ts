// Helpers for the ledger specs: throw-away directories and ledgers in them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger, type AppendInput, type LedgerOptions } from '../engine/ledger/ledger.js';

export interface TempLedger {
  dir: string;
  file: string;
  keyDir: string;
  open(opts?: LedgerOptions): Ledger;
  cleanup(): void;
}

export function tempLedger(): TempLedger {
  const dir = mkdtempSync(join(tmpdir(), 'warden-ledger-'));
  const file = join(dir, 'ledger.db');
  const keyDir = join(dir, 'keys');
  return {
    dir,
    file,
    keyDir,
    open: (opts = {}) => Ledger.open(file, { keyDir, checkpointEveryMs: 0, ...opts }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A plausible stream of entries: several sandboxes, several kinds, payloads with digests and previews. */
export function sampleEntry(i: number): AppendInput {
  const sandboxes = ['sb-alpha', 'sb-beta', null, 'sb-gamma'];
  const kinds = ['exec.started', 'exec.finished', 'file.written', 'policy.denied', 'approval.granted'];
  return {
    actor: i % 7 === 0 ? 'user' : `agent-${i % 3}`,
    sandboxId: sandboxes[i % sandboxes.length] ?? null,
    kind: kinds[i % kinds.length]!,
    payload: {
      n: i,
      argv: ['sh', '-c', `echo ${i}`],
      exit: i % 2,
      stdout: { digest: 'ab'.repeat(32), size: i * 10, preview: `line ${i}\n` },
    },
  };
}
