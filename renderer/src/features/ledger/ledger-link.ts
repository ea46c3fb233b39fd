// Deep links into the Ledger view: `#ledger?seq=N` opens entry N with its inclusion proof. Other views
// (the run and sandbox timelines) link with <a href={ledgerLink(seq)}>; live/ledger-sync.ts follows them.

export function ledgerLink(seq: number): string {
  return `#ledger?seq=${seq}`;
}

/** The seq a `#ledger?seq=N` address names, or null for any other address. */
export function parseLedgerLink(hash: string): number | null {
  const m = /^#ledger\?seq=([1-9][0-9]{0,15})$/.exec(hash);
  if (!m) return null;
  const seq = Number(m[1]);
  return Number.isSafeInteger(seq) ? seq : null;
}
