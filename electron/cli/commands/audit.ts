// `warden audit …`: verify the ledger (or an exported bundle, offline), export evidence, sign a
// checkpoint, read entries. Exit 0 when what was checked is sound, 1 when it is not. The ledger
// (better-sqlite3, the signing code) loads only when one of them runs.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { WardenError } from '../../../shared/errors.js';
import type { LedgerEntry, VerifyResult } from '../../../shared/types/ledger.js';
import { ReportSamplesSchema } from '../../../shared/types/ledger-report.js';
import { parseWith } from '../../../shared/contracts/parse.js';
import type { Ledger } from '../../engine/ledger/index.js';
import { defaultKeyDir, defaultLedgerFile } from '../../engine/ledger/paths.js';
import { printJson, runCommand } from '../output.js';
import { keptSamples } from '../report-history.js';

const REASONS: Record<string, string> = {
  'hash mismatch': 'its fields no longer hash to its stored hash (changed in place)',
  'broken link': 'the chain breaks here: the next entry commits to a different version of this one',
  gap: 'this entry is missing (deleted, or the rest renumbered over it)',
  duplicate: 'this entry is a copy of another one',
  reordered: 'an entry from elsewhere in the log was moved here',
  inserted: 'this entry was spliced in: the entry after it links past it',
  'checkpoint mismatch':
    'the entries from here on do not match what a signed checkpoint vouched for (cut short, older copy restored, or rewritten)',
  'bad signature': 'a checkpoint does not verify with the ledger key',
};

// Entries, key names and bundles are untrusted: never let them drive the terminal.
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const clean = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '?');

function explain(v: VerifyResult, what: string): string {
  const cp = v.checkpoint;
  if (v.ok) {
    const against = cp
      ? `the Merkle root matches the checkpoint of ${cp.size} entries signed by ${clean(cp.keyName)} (key id ${cp.keyId})${cp.size < v.entries ? `; the last ${v.entries - cp.size} entries are newer than it` : ''}`
      : 'no signed checkpoint exists yet (nothing vouches against a cut tail or a rewrite)';
    return `ok: ${clean(what)} of ${v.entries} entries verified: hashes, chain and sequence hold; ${against}.\n`;
  }
  const bad = v.firstBad!;
  return `FAILED: ${clean(what)} of ${v.entries} entries: first bad entry ${bad.seq}: ${bad.reason} — ${REASONS[bad.reason] ?? ''}.\n`;
}

function seqOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,15}$/.test(value)) throw new WardenError('E_BAD_INPUT', `${name} must be a positive entry number, not "${value}"`);
  return Number(value);
}

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new WardenError('E_NOT_FOUND', `cannot read ${what} ${file}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new WardenError('E_BAD_INPUT', `${file} is not JSON`);
  }
}

/** --key takes a verifier key (name+id+key) or a file holding one. */
function keyOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return existsSync(value) ? readFileSync(value, 'utf8').trim() : value;
}

function ledgerFile(opts: { ledger?: string }): string {
  const file = opts.ledger ?? defaultLedgerFile();
  if (!existsSync(file)) throw new WardenError('E_NOT_FOUND', `no ledger at ${file}`, 'set WARDEN_HOME or pass --ledger FILE');
  return file;
}

function progress(json: boolean): ((done: number, total: number) => void) | undefined {
  if (json || !process.stderr.isTTY) return undefined;
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (now - last < 200 && done < total) return;
    last = now;
    process.stderr.write(`\rverifying ${done}/${total} entries${done >= total ? '\n' : ''}`);
  };
}

interface VerifyOpts {
  json?: boolean;
  report?: string;
  previous?: string;
  key?: string;
  ledger?: string;
}

interface ExportOpts {
  json?: boolean;
  out: string;
  html?: string;
  sandbox?: string;
  from?: string;
  to?: string;
  ledger?: string;
  samples?: string;
}

const ledgerCode = () => import('../../engine/ledger/index.js');

async function openLedger(opts: { ledger?: string }): Promise<Ledger> {
  const { Ledger } = await ledgerCode();
  // No schedule in a short-lived CLI process; export and checkpoint sign explicitly.
  return Ledger.open(ledgerFile(opts), { keyDir: defaultKeyDir(), checkpointEveryMs: 0, checkpointOnClose: false });
}

function printEntries(entries: LedgerEntry[]): string {
  return entries
    .map(
      (e) =>
        clean(
          `${String(e.seq).padStart(7)}  ${e.time}  ${e.sandboxId ?? '-'}  ${e.actor}  ${e.kind}  ${JSON.stringify(e.payload).slice(0, 160)}`,
        ) + '\n',
    )
    .join('');
}

export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('verify, export and read the tamper-evident audit ledger');

  audit
    .command('verify')
    .description(
      'check every entry, the hash chain and the Merkle root against the signed checkpoints; or an exported bundle with --report',
    )
    .option('--json', 'print { ok, entries, firstBad, checkpoint } as JSON')
    .option('--report <file>', 'verify an exported evidence bundle offline instead of the ledger')
    .option('--previous <file>', 'with --report: an earlier bundle this one must extend')
    .option('--key <vkey|file>', 'the signing key to trust (name+keyid+key), instead of the one stored with the ledger or in the bundle')
    .option('--ledger <file>', 'the ledger database (default: WARDEN_HOME/ledger.db)')
    .action((opts: VerifyOpts) =>
      runCommand(!!opts.json, async () => {
        const vkey = keyOption(opts.key);
        const { verifyBundle, verifyLedgerFile } = await ledgerCode();
        let result: VerifyResult;
        if (opts.report !== undefined) {
          const previous = opts.previous !== undefined ? readJson(opts.previous, 'the previous bundle') : undefined;
          result = verifyBundle(readJson(opts.report, 'the bundle'), {
            ...(vkey ? { vkey } : {}),
            ...(previous !== undefined ? { previous } : {}),
          });
        } else {
          if (opts.previous !== undefined) throw new WardenError('E_BAD_INPUT', '--previous goes with --report');
          const onProgress = progress(!!opts.json);
          result = verifyLedgerFile(ledgerFile(opts), {
            keyDir: defaultKeyDir(),
            ...(vkey ? { vkey } : {}),
            ...(onProgress ? { onProgress } : {}),
          });
        }
        if (opts.json) printJson({ ok: result.ok, entries: result.entries, firstBad: result.firstBad, checkpoint: result.checkpoint });
        else process.stdout.write(explain(result, opts.report !== undefined ? `bundle ${opts.report}` : 'ledger'));
        return result.ok ? 0 : 1;
      }),
    );

  audit
    .command('export')
    .description('write a self-contained evidence bundle (JSON) and optionally an HTML report; signs a checkpoint')
    .requiredOption('--out <file>', 'where to write the JSON bundle')
    .option('--html <file>', 'also write a human-readable HTML report')
    .option('--sandbox <id|name>', 'only entries of this sandbox (its id, an id prefix, or its name, also of one that is gone)')
    .option('--from <seq>', 'first entry')
    .option('--to <seq>', 'last entry')
    .option(
      '--samples <file>',
      "resource samples for the HTML report's timeline: a JSON array of {t, cpuPct, memBytes, memLimit, netRx, netTx, pids} (default with --sandbox: the history the control panel kept)",
    )
    .option('--json', 'print a summary as JSON')
    .option('--ledger <file>', 'the ledger database (default: WARDEN_HOME/ledger.db)')
    .action((opts: ExportOpts) =>
      runCommand(!!opts.json, async () => {
        const fromSeq = seqOption(opts.from, '--from');
        const toSeq = seqOption(opts.to, '--to');
        const { exportBundle, renderReportHtml, verifyBundle } = await ledgerCode();
        if (opts.samples !== undefined && opts.html === undefined)
          throw new WardenError('E_BAD_INPUT', '--samples needs --html: they are drawn on the report');
        const samples =
          opts.samples === undefined
            ? []
            : parseWith(ReportSamplesSchema, readJson(opts.samples, 'resource samples'), `--samples ${opts.samples}`);
        const ledger = await openLedger(opts);
        try {
          const bundle = exportBundle(ledger, {
            ...(opts.sandbox !== undefined ? { sandboxId: opts.sandbox } : {}),
            ...(fromSeq !== undefined ? { fromSeq } : {}),
            ...(toSeq !== undefined ? { toSeq } : {}),
          });
          writeFileSync(opts.out, `${JSON.stringify(bundle, null, 1)}\n`);
          if (opts.html !== undefined) {
            const drawn = opts.samples !== undefined ? samples : await keptSamples(ledgerFile(opts), bundle.selection.sandboxId);
            writeFileSync(opts.html, renderReportHtml(bundle, verifyBundle(bundle), { samples: drawn }));
          }
          const summary = {
            out: opts.out,
            html: opts.html ?? null,
            entries: bundle.entries.length,
            selection: bundle.selection,
            checkpoint: { size: bundle.checkpoint.size, root: bundle.checkpoint.root },
            verification: bundle.verification,
          };
          if (opts.json) printJson(summary);
          else {
            process.stdout.write(
              `wrote ${opts.out}: ${bundle.entries.length} entries, checkpoint of ${bundle.checkpoint.size} entries (root ${bundle.checkpoint.root})${opts.html ? `, report ${opts.html}` : ''}\n`,
            );
            process.stdout.write(explain(bundle.verification, 'ledger'));
            process.stdout.write(`signing key: ${clean(bundle.publicKey.vkey)}\n`);
          }
          return bundle.verification.ok ? 0 : 1;
        } finally {
          ledger.close();
        }
      }),
    );

  audit
    .command('checkpoint')
    .description('sign a checkpoint of the ledger now (also written beside the database)')
    .option('--json', 'print the signed checkpoint as JSON')
    .option('--ledger <file>', 'the ledger database (default: WARDEN_HOME/ledger.db)')
    .action((opts: { json?: boolean; ledger?: string }) =>
      runCommand(!!opts.json, async () => {
        const ledger = await openLedger(opts);
        try {
          const cp = ledger.checkpoint('manual');
          if (opts.json) printJson(cp);
          else process.stdout.write(cp.note);
        } finally {
          ledger.close();
        }
      }),
    );

  audit
    .command('log')
    .description('print ledger entries')
    .option('--sandbox <id|name>', 'only entries of this sandbox (its id, an id prefix, or its name, also of one that is gone)')
    .option('--kind <kind>', 'only entries of this kind')
    .option('--from <seq>', 'first entry')
    .option('--limit <n>', 'at most this many (default 100)')
    .option('--json', 'print the entries as JSON')
    .option('--ledger <file>', 'the ledger database (default: WARDEN_HOME/ledger.db)')
    .action((opts: { sandbox?: string; kind?: string; from?: string; limit?: string; json?: boolean; ledger?: string }) =>
      runCommand(!!opts.json, async () => {
        const fromSeq = seqOption(opts.from, '--from');
        const limit = seqOption(opts.limit, '--limit') ?? 100;
        const { resolveSandboxRef } = await ledgerCode();
        const ledger = await openLedger(opts);
        try {
          const entries = ledger.entries({
            limit: Math.min(limit, 100_000),
            ...(fromSeq !== undefined ? { fromSeq } : {}),
            ...(opts.sandbox !== undefined ? { sandboxId: resolveSandboxRef(ledger, opts.sandbox) } : {}),
            ...(opts.kind !== undefined ? { kind: opts.kind } : {}),
          });
          if (opts.json) printJson(entries);
          else process.stdout.write(printEntries(entries));
        } finally {
          ledger.close();
        }
      }),
    );
}
