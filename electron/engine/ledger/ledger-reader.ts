// What the UI's ledger view asks of the ledger: pages of entries, a summary for the header and the
// filter menus, a full verification with progress, and a report export it can save. Doors (the web
// shell, Electron IPC) hold one per process and validate requests before they get here.
import { createHash } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import type { LedgerMethodParams } from '../../../shared/contracts/methods.js';
import type { LedgerProof } from '../../../shared/types/ledger-proof.js';
import type { LedgerExportResult, LedgerEntriesPage, LedgerSummary, LedgerVerifyOutcome } from '../../../shared/types/ledger.js';
import { exportBundleAsync } from './export.js';
import { verifyBundle } from './bundle-verify.js';
import { renderReportHtml } from './report-html.js';
import type { Ledger } from './ledger.js';
import { resolveSandboxRef } from './sandbox-ref.js';
import { timelineEntries } from './timeline-entries.js';
import type { TimelineEntriesPage } from '../../../shared/types/timeline.js';

export type VerifyProgress = (done: number, total: number) => void;

interface Menus {
  /** Entries 1..through have been looked at. */
  through: number;
  kinds: Set<string>;
  actors: Set<string>;
}

/** Seqs read per step when the menus catch up (~15 ms). */
const MENU_SLICE = 32768;
const MENU_MAX = 200;

export class LedgerReader {
  private verifying: Promise<LedgerVerifyOutcome> | null = null;
  /** Everyone waiting on the verification under way hears its progress. */
  private readonly watchers = new Set<VerifyProgress>();
  private lastProgress: [number, number] | null = null;
  private readonly menus: Menus = { through: 0, kinds: new Set(), actors: new Set() };
  private menusBusy: Promise<unknown> = Promise.resolve();

  constructor(private readonly ledger: Ledger) {}

  private key(): LedgerSummary['key'] {
    const k = this.ledger.publicKey;
    return { fingerprint: createHash('sha256').update(k.spkiPem).digest('hex'), keyName: k.keyName, keyId: k.keyId };
  }

  async 'ledger.summary'(): Promise<LedgerSummary> {
    const head = this.ledger.head();
    const menus = await this.menusThrough(head.size);
    const latest = this.ledger.checkpoints(1)[0];
    return {
      size: head.size,
      headHash: head.hash,
      key: this.key(),
      latestCheckpoint: latest ? { size: latest.size, time: latest.time, reason: latest.reason } : null,
      kinds: [...menus.kinds].sort().slice(0, MENU_MAX),
      actors: [...menus.actors].sort().slice(0, MENU_MAX),
    };
  }

  /**
   * The filter menus, kept up to date incrementally: entries are only ever appended, so each summary
   * reads just the entries since the last one, a slice at a time (a DISTINCT over a million rows holds
   * the thread for over a second, and the view asks for a summary every few seconds).
   */
  private menusThrough(size: number): Promise<Menus> {
    const run = async (): Promise<Menus> => {
      const m = this.menus;
      while (m.through < size) {
        const to = Math.min(size, m.through + MENU_SLICE);
        const got = this.ledger.kindsAndActors(m.through + 1, to);
        for (const k of got.kinds) m.kinds.add(k);
        for (const a of got.actors) m.actors.add(a);
        m.through = to;
        if (m.through < size) await new Promise((r) => setImmediate(r));
      }
      return m;
    };
    // One catch-up at a time; a caller that wants more waits for it, then takes the rest.
    const next = this.menusBusy.then(run, run);
    this.menusBusy = next;
    return next;
  }

  async 'ledger.entries'(q: LedgerMethodParams<'ledger.entries'>): Promise<LedgerEntriesPage> {
    const page = await this.ledger.browseAsync(q.sandboxId ? { ...q, sandboxId: this.sandboxFilter(q.sandboxId) } : q);
    return { ...page, size: this.ledger.head().size };
  }

  /** A sandbox's entries in a time window, compact, oldest first: what its timeline draws. */
  async 'timeline.entries'(p: LedgerMethodParams<'timeline.entries'>): Promise<TimelineEntriesPage> {
    return timelineEntries(this.ledger, this.sandboxFilter(p.sandboxId), p.since, p.until, p.limit ?? 5000);
  }

  /** The view's sandbox filter takes a name too; one the ledger does not know filters to an empty page, as an id does. */
  private sandboxFilter(ref: string): string {
    try {
      return resolveSandboxRef(this.ledger, ref);
    } catch (err) {
      if (err instanceof WardenError && err.code === 'E_NOT_FOUND') return ref;
      throw err;
    }
  }

  /**
   * One verification at a time per ledger: a second caller shares the one under way (and its
   * progress from then on). It runs off the event loop's back (verifyAsync), so the door keeps
   * serving everyone else meanwhile.
   */
  async 'ledger.verify'(_p: LedgerMethodParams<'ledger.verify'>, onProgress?: VerifyProgress): Promise<LedgerVerifyOutcome> {
    if (onProgress) {
      this.watchers.add(onProgress);
      if (this.verifying && this.lastProgress) onProgress(...this.lastProgress); // joining late: where it is now
    }
    try {
      this.verifying ??= this.runVerify();
      return await this.verifying;
    } finally {
      if (onProgress) this.watchers.delete(onProgress);
    }
  }

  private async runVerify(): Promise<LedgerVerifyOutcome> {
    const started = Date.now();
    try {
      const result = await this.ledger.verifyAsync({
        onProgress: (done, total) => {
          this.lastProgress = [done, total];
          for (const fn of this.watchers) fn(done, total);
        },
      });
      return { ...result, durationMs: Date.now() - started, key: this.key() };
    } finally {
      this.verifying = null;
      this.lastProgress = null;
    }
  }

  async 'ledger.export'(p: LedgerMethodParams<'ledger.export'>): Promise<LedgerExportResult> {
    if (p.fromSeq !== undefined && p.toSeq !== undefined && p.fromSeq > p.toSeq)
      throw new WardenError('E_BAD_INPUT', `from ${p.fromSeq} is after to ${p.toSeq}`, 'give a range with from ≤ to');
    const { samples, ...selection } = p;
    const bundle = await exportBundleAsync(this.ledger, selection);
    const stamp = bundle.createdAt.replace(/[:.]/g, '-');
    const scope = p.sandboxId ? `-${p.sandboxId.slice(0, 24)}` : '';
    return {
      jsonName: `warden-audit${scope}-${stamp}.json`,
      htmlName: `warden-audit${scope}-${stamp}.html`,
      json: `${JSON.stringify(bundle, null, 1)}\n`,
      html: renderReportHtml(bundle, verifyBundle(bundle), { samples: samples ?? [] }),
      entries: bundle.entries.length,
    };
  }

  /**
   * The entry, the newest signed checkpoint and the entry's audit path in that checkpoint's tree: all
   * the page needs to check the entry is in the signed log without trusting this process.
   */
  async 'ledger.proof'(p: LedgerMethodParams<'ledger.proof'>): Promise<LedgerProof> {
    const entry = this.ledger.entries({ fromSeq: p.seq, toSeq: p.seq, limit: 1 })[0];
    if (!entry) throw new WardenError('E_NOT_FOUND', `no ledger entry #${p.seq}`, `the ledger has ${this.ledger.head().size} entries`);
    const latest = this.ledger.checkpoints(1)[0];
    const covered = latest !== undefined && p.seq <= latest.size;
    return {
      entry,
      checkpoint: latest ? { note: latest.note, time: latest.time } : null,
      inclusion: covered ? { treeSize: latest.size, path: this.ledger.inclusionProof(p.seq, latest.size).path } : null,
      vkey: this.ledger.publicKey.vkey,
    };
  }

  /** Signs a checkpoint now (refused, with the reason, if the entries it would cover do not verify). */
  async 'ledger.checkpoint'(): Promise<{ size: number; time: string }> {
    const cp = this.ledger.checkpoint('manual');
    return { size: cp.size, time: cp.time };
  }
}
