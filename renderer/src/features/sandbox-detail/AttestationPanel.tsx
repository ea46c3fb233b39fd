// The sandbox's attestation: each promise with pass/fail and the evidence seen inside, a loud
// banner when any failed, and buttons to attest again (plain or deep). The automatic attestation
// after start arrives as an event; nothing here polls.
import { useEffect, useState } from 'react';
import type { Attestation } from '../../../../shared/types/attestation.js';
import { useServices } from '../../services.js';
import './attestation.css';

export function AttestationPanel({ sandboxId, running }: { sandboxId: string; running: boolean }) {
  const { client } = useServices();
  const [latest, setLatest] = useState<Attestation | null>(null);
  const [busy, setBusy] = useState<null | 'plain' | 'deep'>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    const off = client.on('sandbox.attested', (a) => {
      if (a.sandboxId === sandboxId) setLatest(a);
    });
    client.call('sandbox.attestation', { ref: sandboxId }).then(
      (a) => live && a && setLatest((cur) => cur ?? a),
      () => undefined,
    );
    return () => {
      live = false;
      off();
    };
  }, [client, sandboxId]);

  const attest = async (deep: boolean) => {
    setBusy(deep ? 'deep' : 'plain');
    setError(null);
    try {
      setLatest(await client.call('sandbox.attest', { ref: sandboxId, deep }));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  };

  const failed = latest?.checks.filter((c) => !c.ok) ?? [];
  return (
    <section className="attestation" aria-labelledby="attestation-title" data-testid="attestation">
      <div className="attestation-head">
        <h2 id="attestation-title">Attestation</h2>
        {latest ? (
          <span className="muted small">
            {latest.deep ? 'deep, ' : ''}
            {new Date(latest.time).toLocaleTimeString()} by {latest.actor}, {latest.durationMs} ms
          </span>
        ) : null}
        <span className="grow" />
        <button type="button" className="btn" disabled={!running || busy !== null} onClick={() => void attest(false)} data-testid="attest">
          {busy === 'plain' ? 'Attesting…' : 'Attest'}
        </button>
        <button
          type="button"
          className="btn"
          disabled={!running || busy !== null}
          onClick={() => void attest(true)}
          data-testid="attest-deep"
          title="Also meets the pids and memory limits in child processes"
        >
          {busy === 'deep' ? 'Attesting…' : 'Attest deeply'}
        </button>
      </div>
      {error ? (
        <div className="alert error" role="alert">
          {error}
        </div>
      ) : null}
      {failed.length ? (
        <div className="banner error attestation-failed" role="alert" data-testid="attestation-failed">
          <strong>This sandbox does not keep its promises:</strong> {failed.map((c) => c.promise).join('; ')}. Do not trust its isolation.
        </div>
      ) : null}
      {latest ? (
        <ul className="attestation-list">
          {latest.checks.map((c) => (
            <li key={c.id} data-check={c.id} data-result={c.skipped ? 'skipped' : c.ok ? 'pass' : 'fail'}>
              <span
                className={c.skipped ? 'muted' : c.ok ? 'ok-text' : 'bad-text'}
                aria-label={c.skipped ? 'not applicable' : c.ok ? 'holds' : 'fails'}
              >
                {c.skipped ? '–' : c.ok ? '✓' : '✗'}
              </span>
              <span>{c.promise}</span>
              <span className="muted mono small" title={c.evidence}>
                {c.evidence}
              </span>
            </li>
          ))}
        </ul>
      ) : (
        <span className="muted small">
          {running ? 'Not attested yet: the check after start is on its way.' : 'Start the sandbox to attest it.'}
        </span>
      )}
    </section>
  );
}
