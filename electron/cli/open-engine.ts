// The CLI runs the engine in-process. Its Podman service (when Warden has to start one) is left
// running with an idle timeout, so the next command finds it warm.
import { ensureWardenHome } from '../engine/paths.js';
import { PodmanEngine, type PodmanEngineOptions } from '../engine/podman/podman-engine.js';
import type { WardenEngine } from '../engine/engine.js';
import { DETACHED_SERVICE, openWarden } from '../engine/open-warden.js';

function cliPodmanOptions(): Partial<PodmanEngineOptions> {
  // WARDEN_PODMAN_SOCKET pins one socket: no discovery, no service of Warden's own.
  return { socketPath: process.env.WARDEN_PODMAN_SOCKET || undefined, ...DETACHED_SERVICE };
}

export async function openPodman(): Promise<PodmanEngine> {
  return PodmanEngine.open({ home: ensureWardenHome(), ...cliPodmanOptions() });
}

/**
 * Opens the engine, runs `body`, and always closes what it opened. No gateway: a command run here
 * is the user's own, recorded by the engine like a UI action (README, "Who records a user's command").
 */
export async function withEngine<T>(body: (engine: WardenEngine) => Promise<T>): Promise<T> {
  const warden = await openWarden(ensureWardenHome(), { gateway: false, podmanOptions: cliPodmanOptions() });
  try {
    return await body(warden.engine);
  } finally {
    // The attestation a create or start began in the background lands before the CLI exits.
    await warden.engine.attestations.idle();
    warden.close();
  }
}
