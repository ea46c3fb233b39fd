// Always visible when something is wrong: Warden unreachable (web shell) or Podman unreachable,
// with what to do. It goes away by itself when the connection is back.
import { useStore } from '../../store/index.js';

export function EngineBanner() {
  const link = useStore((s) => s.link);
  const status = useStore((s) => s.engineStatus);
  const error = useStore((s) => s.engineError);
  const web = typeof window !== 'undefined' && !('warden' in window);

  if (link === 'closed' || (link === 'connecting' && web && status !== 'unknown')) {
    return (
      <div className="banner error" role="alert" data-testid="engine-banner" data-kind="link">
        <strong>Lost the connection to Warden.</strong> Reconnecting… If it does not come back, check that <code>warden serve</code> is
        still running.
      </div>
    );
  }
  if (status === 'unreachable' || status === 'connecting') {
    return (
      <div
        className={`banner ${status === 'connecting' ? 'warn' : 'error'}`}
        role="alert"
        data-testid="engine-banner"
        data-kind="engine"
        data-status={status}
      >
        <strong>{status === 'connecting' ? 'Podman stopped answering: reconnecting…' : 'Podman is not reachable.'}</strong>{' '}
        {error?.message && status === 'unreachable' ? <span>{error.message}. </span> : null}
        <span>
          {error?.hint ?? 'Start it with '}
          {error?.hint ? null : (
            <>
              <code>podman system service --time=0 &amp;</code> or <code>systemctl --user start podman.socket</code>, or run{' '}
              <code>warden doctor</code>.
            </>
          )}
        </span>{' '}
        <span className="muted">Warden reconnects by itself.</span>
      </div>
    );
  }
  return null;
}
