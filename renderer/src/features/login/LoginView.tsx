// The web shell's door: a one-time login code (from the link `warden serve` prints) or the UI
// token is exchanged once for a session cookie; nothing secret stays in the address bar.
import { useState } from 'react';
import { login } from '../../api/web-bridge.js';

export function LoginView({ onLoggedIn, reason }: { onLoggedIn(): void; reason?: string | undefined }) {
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(reason ?? null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    const failure = await login(code.trim()).catch((err: unknown) => ({ code: 'E_INTERNAL' as const, message: String(err) }));
    setBusy(false);
    if (failure) setError(failure.message);
    else onLoggedIn();
  };
  return (
    <main className="login" data-testid="login-view">
      <form className="login-box" onSubmit={(e) => void submit(e)}>
        <div className="brand big">
          <span className="logo" aria-hidden="true">
            ◆
          </span>
          Warden
        </div>
        <p>
          Open the one-time link that <code>warden serve</code> printed, or paste the UI token from <code>$WARDEN_HOME/ui-token</code>.
        </p>
        <label className="field">
          <span className="field-label">Login code or token</span>
          <input type="password" value={code} onChange={(e) => setCode(e.target.value)} autoComplete="off" autoFocus />
        </label>
        {error ? (
          <div className="alert error" role="alert">
            {error}
          </div>
        ) : null}
        <button type="submit" className="btn primary" disabled={busy || !code.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
