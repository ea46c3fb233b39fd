// The CLI runs the engine in-process. Its Podman service (when Warden has to start one) is left
// running with an idle timeout, so the next command finds it warm.
import { ensureWardenHome } from '../engine/paths.js';
import { PodmanEngine } from '../engine/podman/podman-engine.js';
import { WardenEngine } from '../engine/engine.js';
import { openAuditLedger } from '../engine/open-ledger.js';

const CLI_SERVICE_IDLE_SECONDS = 300;

export async function openPodman(): Promise<PodmanEngine> {
  const home = ensureWardenHome();
  // WARDEN_PODMAN_SOCKET pins one socket: no discovery, no service of Warden's own.
  const socketPath = process.env.WARDEN_PODMAN_SOCKET || undefined;
  return PodmanEngine.open({ home, socketPath, detachedService: true, serviceIdleSeconds: CLI_SERVICE_IDLE_SECONDS });
}

/** Opens the engine, runs `body`, and always closes what it opened. */
export async function withEngine<T>(body: (engine: WardenEngine) => Promise<T>): Promise<T> {
  const podman = await openPodman();
  const ledger = openAuditLedger(ensureWardenHome());
  const engine = new WardenEngine(podman, ledger, { actor: 'user' });
  try {
    return await body(engine);
  } finally {
    // The attestation a create or start began in the background lands before the CLI exits.
    await engine.attestations.idle();
    engine.close();
    ledger.close();
  }
}
