// What the UI's ledger view asks of the ledger: pages of entries, a summary for the header and the
// filter menus, a full verification with progress, and a report export it can save. Doors (the web
// shell, Electron IPC) hold one per process and validate requests before they get here.
import { createHash } from 'node:crypto';
import { WardenError } from '../../../shared/errors.js';
import type { LedgerMethodParams } from '../../../shared/contracts/methods.js';
import type { LedgerExportResult, LedgerPage, LedgerSummary, LedgerVerifyOutcome } from '../../../shared/types/ledger.js';
import { exportBundleAsync } from './export.js';
import { verifyBundle } from './bundle-verify.js';
import { renderReportHtml } from './report-html.js';
import type { Ledger } from './ledger.js';

export type VerifyProgress = (done: number, total: number) => void;

export class LedgerView {
  private verifying: Promise<LedgerVerifyOutcome> | null = null;
  /** Everyone waiting on the verification under way hears its progress. */
  private readonly watchers = new Set<VerifyProgress>();
  private lastProgress: [number, number] | null = null;

  constructor(private readonly ledger: Ledger) {}

  private key(): LedgerSummary['key'] {
    const k = this.ledger.publicKey;
    return { fingerprint: createHash('sha256').update(k.spkiPem).digest('hex'), keyName: k.keyName, keyId: k.keyId };
  }

  async 'ledger.summary'(): Promise<LedgerSummary> {
    const head = this.ledger.head();
    const latest = this.ledger.checkpoints(1)[0];
    return {
      size: head.size,
      headHash: head.hash,
      key: this.key(),
      latestCheckpoint: latest ? { size: latest.size, time: latest.time, reason: latest.reason } : null,
      kinds: this.ledger.distinct('kind'),
      actors: this.ledger.distinct('actor'),
    };
  }

  async 'ledger.entries'(q: LedgerMethodParams<'ledger.entries'>): Promise<LedgerPage> {
    const page = this.ledger.browse(q);
    return { ...page, size: this.ledger.head().size };
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
    if (p.fromSeq !== undefined && p.toSeq !== undefined && p.fromSeq > p.toSeq) throw new WardenError('E_BAD_INPUT', `from ${p.fromSeq} is after to ${p.toSeq}`, 'give a range with from ≤ to');
    const bundle = await exportBundleAsync(this.ledger, p);
    const stamp = bundle.createdAt.replace(/[:.]/g, '-');
    const scope = p.sandboxId ? `-${p.sandboxId.slice(0, 24)}` : '';
    return {
      jsonName: `warden-audit${scope}-${stamp}.json`,
      htmlName: `warden-audit${scope}-${stamp}.html`,
      json: `${JSON.stringify(bundle, null, 1)}\n`,
      html: renderReportHtml(bundle, verifyBundle(bundle)),
      entries: bundle.entries.length,
    };
  }
}
