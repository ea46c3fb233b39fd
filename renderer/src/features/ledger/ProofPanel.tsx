// An entry's inclusion proof, checked here in the page: the server sends the entry, the latest signed
// checkpoint, the audit path and the key; this page recomputes the leaf hash, walks the path to a root,
// checks the checkpoint's Ed25519 signature and compares the roots (shared/ledger/entry-proof.ts with
// WebCrypto). A server that lies gets a plain "failed" naming why, never a quiet pass.
import { useEffect, useMemo, useRef, useState } from 'react';
import { toErrorInfo, type ErrorInfo } from '../../../../shared/errors.js';
import { checkEntryProof } from '../../../../shared/ledger/entry-proof.js';
import type { LedgerEntry } from '../../../../shared/types/ledger.js';
import type { ProofVerdict } from '../../../../shared/types/ledger-proof.js';
import { useServices } from '../../services.js';
import { useStore } from '../../store/index.js';
import { ledgerController } from '../../live/ledger-controller.js';
import { formatCount, groupHex, shortHash } from './ledger-format.js';
import { pinKey, pinnedKey, webProofCrypto } from './web-proof-crypto.js';

type State = { phase: 'checking' } | { phase: 'done'; verdict: ProofVerdict } | { phase: 'error'; error: ErrorInfo };

function Checkpoint({ cp }: { cp: NonNullable<ProofVerdict['checkpoint']> }) {
  return (
    <span className="muted">
      checkpoint of <b data-testid="proof-size">{formatCount(cp.size)}</b> entries · root{' '}
      <code title={cp.root} data-testid="proof-root">
        {shortHash(cp.root, 16)}
      </code>{' '}
      · signed by {cp.keyName} ({cp.keyId}) · key{' '}
      <code title={cp.fingerprint} data-testid="proof-fingerprint">
        {groupHex(cp.fingerprint, 8)}
      </code>
    </span>
  );
}

export function ProofPanel({ entry }: { entry: LedgerEntry }) {
  const { client } = useServices();
  const [state, setState] = useState<State>({ phase: 'checking' });
  const [round, setRound] = useState(0);
  const [signing, setSigning] = useState<ErrorInfo | 'busy' | null>(null);

  // Checked again when what is shown changes, not when the list hands over an equal copy of it.
  const shownKey = useMemo(() => JSON.stringify(entry), [entry]);
  const shown = useRef(entry);
  shown.current = entry;

  useEffect(() => {
    let live = true;
    const entry = shown.current;
    setState({ phase: 'checking' });
    const check = async () => {
      const proof = await client.call('ledger.proof', { seq: entry.seq });
      const pinned = pinnedKey();
      const verdict = await checkEntryProof(proof, webProofCrypto, { shown: entry, ...(pinned ? { trustedFingerprint: pinned } : {}) });
      // Trust on first use: the first key seen checking out is the one later proofs must be signed by.
      if (verdict.status === 'ok' && !pinned) pinKey(verdict.checkpoint.fingerprint);
      return verdict;
    };
    check().then(
      (verdict) => live && setState({ phase: 'done', verdict }),
      (err: unknown) => live && setState({ phase: 'error', error: toErrorInfo(err) }),
    );
    return () => {
      live = false;
    };
  }, [client, shownKey, round]);

  const sign = async () => {
    setSigning('busy');
    try {
      await client.call('ledger.checkpoint', {});
      setSigning(null);
      setRound((r) => r + 1);
      void ledgerController(client, useStore).refresh(); // the header shows the new latest checkpoint
    } catch (err) {
      setSigning(toErrorInfo(err));
    }
  };

  const v = state.phase === 'done' ? state.verdict : null;
  const status = state.phase === 'done' ? state.verdict.status : state.phase;
  return (
    <div
      className={`proof proof-${status}`}
      data-testid="ledger-proof"
      data-status={status}
      data-reason={v?.status === 'failed' ? v.reason : undefined}
      role="status"
    >
      {state.phase === 'checking' ? <span className="muted">Checking the inclusion proof in this page…</span> : null}
      {state.phase === 'error' ? (
        <span>
          <strong className="verdict">Proof could not be fetched:</strong> {state.error.message}
        </span>
      ) : null}
      {v?.status === 'ok' ? (
        <>
          <strong className="verdict">✓ Proof checks out: entry #{v.seq} is in the signed log</strong>
          <span>
            Checked in this page: its leaf hash recomputed from its fields, a {v.pathLength}-step audit path walked to the root, that root
            compared with the checkpoint&apos;s, and the checkpoint&apos;s Ed25519 signature verified.
          </span>
          <Checkpoint cp={v.checkpoint} />
        </>
      ) : null}
      {v?.status === 'pending' ? (
        <>
          <strong className="verdict">◷ Not yet in a signed checkpoint</strong>
          <span>
            Entry #{v.seq} is newer than the latest signed checkpoint
            {v.checkpoint ? ` (${formatCount(v.checkpoint.size)} entries)` : ' (none signed yet)'}: only the hash chain holds it so far. One
            is signed every minute while entries are added.
          </span>
        </>
      ) : null}
      {v?.status === 'failed' ? (
        <>
          <strong className="verdict">✗ Proof failed: {v.reason}</strong>
          <span data-testid="proof-detail">{v.detail}</span>
          {v.checkpoint ? <Checkpoint cp={v.checkpoint} /> : null}
          {v.reason === 'bad key' && v.checkpoint && pinnedKey() ? (
            <span>
              This browser first saw key <code title={pinnedKey()}>{shortHash(pinnedKey() ?? '', 16)}</code>. If the ledger&apos;s key
              really changed (compare <code>ledger-ed25519.vkey</code>), trust the new one:{' '}
              <button
                type="button"
                className="btn small"
                onClick={() => {
                  pinKey(v.checkpoint!.fingerprint);
                  setRound((r) => r + 1);
                }}
              >
                Trust key {shortHash(v.checkpoint.fingerprint, 8)}
              </button>
            </span>
          ) : null}
        </>
      ) : null}
      {state.phase !== 'checking' ? (
        <span className="proof-actions">
          {v?.status === 'pending' ? (
            <button type="button" className="btn small" disabled={signing === 'busy'} onClick={() => void sign()} data-testid="proof-sign">
              {signing === 'busy' ? 'Signing…' : 'Sign a checkpoint now'}
            </button>
          ) : null}
          <button type="button" className="btn small" onClick={() => setRound((r) => r + 1)} data-testid="proof-recheck">
            Check again
          </button>
          {signing && signing !== 'busy' ? <span className="bad-text">{signing.message}</span> : null}
        </span>
      ) : null}
    </div>
  );
}
