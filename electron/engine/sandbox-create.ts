// The pieces of sandbox.create beside its engine calls: the ledger's sandbox.created payload, the
// same for a pooled and a cold create, and the names of creates under way, so two creates of one
// name at once cannot both reach the pool (the second would cost a pooled sandbox for nothing).
import type { SandboxInfo } from '../../shared/types/sandbox.js';
import { nameTaken } from './podman/container-names.js';

/** sandbox.created's payload; a pooled one's Podman labels are the pool's, so its owner's are kept here. */
export function createdPayload(info: SandboxInfo, pooled: boolean): Record<string, unknown> {
  return {
    name: info.name,
    image: info.image,
    runtime: info.runtime,
    network: info.network,
    limits: info.limits,
    workspace: info.workspace,
    expiresAt: info.expiresAt,
    ...(pooled ? { pooled: true, labels: info.labels } : {}),
  };
}

/** Names of creates under way in one engine: a second create of a name is refused while the first runs. */
export class NamesUnderWay {
  private readonly held = new Set<string>();

  async hold<T>(name: string | undefined, body: () => Promise<T>): Promise<T> {
    if (name === undefined) return body();
    if (this.held.has(name)) throw nameTaken(name);
    this.held.add(name);
    try {
      return await body();
    } finally {
      this.held.delete(name);
    }
  }
}
