// Labels on every sandbox: how Warden finds its own after a restart and never touches anyone else's.
// Limits are written here at create and checked against inspect, so a list needs no inspect per sandbox.

export const LABEL = {
  managed: 'warden.managed',
  version: 'warden.version',
  runtime: 'warden.runtime',
  network: 'warden.network',
  workspace: 'warden.workspace',
  /** uid:gid the workspace goes back to when the sandbox is removed (workspace-lease.ts). */
  workspaceOwner: 'warden.workspace-owner',
  expiresAt: 'warden.expires-at',
  memory: 'warden.memory',
  cpus: 'warden.cpus',
  pids: 'warden.pids',
  readOnlyRoot: 'warden.read-only-root',
  tmpSize: 'warden.tmp-size',
  disk: 'warden.disk',
  /** The Warden home the sandbox belongs to (home-id.ts); none: made before homes were labelled (legacy). */
  home: 'warden.home',
  /** The shape key of a warm-pool sandbox (pool/shape.ts); its owner, once claimed, is in pool/owner-records.ts. */
  pool: 'warden.pool',
} as const;

export const MANAGED_FILTER = `${LABEL.managed}=true`;
export const LABEL_SCHEMA_VERSION = '1';

/** Labels a caller may not set: the `warden.` prefix is Warden's. */
export function reservedLabelKeys(labels: Record<string, string> | undefined): string[] {
  return Object.keys(labels ?? {}).filter((k) => k.startsWith('warden.'));
}

export function isManaged(labels: Record<string, string> | null | undefined): boolean {
  return labels?.[LABEL.managed] === 'true';
}

/** A Warden sandbox this home may see: its own, or a legacy one (no home label: shown to the user only). */
export function isThisHome(labels: Record<string, string> | null | undefined, homeId: string): boolean {
  const home = labels?.[LABEL.home];
  return isManaged(labels) && (home === undefined || home === homeId);
}

/** The caller's own labels, without Warden's. */
export function userLabels(labels: Record<string, string> | null | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => !k.startsWith('warden.')));
}
