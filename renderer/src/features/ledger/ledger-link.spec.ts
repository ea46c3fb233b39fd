// Deep links into the Ledger view: what the timelines write is what the view reads, and nothing else is.
import { describe, expect, it } from 'vitest';
import { ledgerLink, parseLedgerLink } from './ledger-link.js';

describe('ledger links', () => {
  it('round-trips a seq', () => {
    for (const seq of [1, 42, 9_007_199_254_740_991]) expect(parseLedgerLink(ledgerLink(seq))).toBe(seq);
  });

  it('reads nothing from other addresses', () => {
    for (const hash of [
      '',
      '#',
      '#ledger',
      '#ledger?seq=0',
      '#ledger?seq=-1',
      '#ledger?seq=1e3',
      '#ledger?seq=12&x=1',
      '#login=abc',
      '#ledger?seq=99999999999999999',
    ])
      expect(parseLedgerLink(hash), hash).toBeNull();
  });
});
