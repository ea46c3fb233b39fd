// A create request's shape: whatever is fixed once the container exists (image, runtime, limits,
// network, read-only root). Two specs of one shape get interchangeable sandboxes, so a pooled one
// can serve the request; name, labels and TTL are the owner's and live in Warden's own record.
// Pure: the same resolution as a cold create (resolveSandbox), so a claim never changes a limit.
import { createHash } from 'node:crypto';
import type { RuntimeName, SandboxSpec } from '../../../shared/types/sandbox.js';
import { resolveSandbox, type ResolvedSandbox } from '../podman/container-spec.js';
import { POOL_NAME_PREFIX } from '../podman/container-names.js';
import { reservedLabelKeys } from '../podman/labels.js';

/** A resolved create less what is the owner's (name, TTL) or makes it unpoolable (workspace). */
export type Shape = Pick<
  ResolvedSandbox,
  'image' | 'runtime' | 'memoryBytes' | 'cpus' | 'pids' | 'network' | 'readOnlyRoot' | 'tmpSizeBytes' | 'diskBytes'
>;

export interface ShapeDefaults {
  image: string;
  /** The runtime a create without one gets; null: none works here, nothing is poolable. */
  runtime: RuntimeName | null;
}

/**
 * The shape of a request a pooled sandbox can serve, or null when it must be created cold: a host
 * workspace (its mount and id mapping are made at create), env at create (baked into the
 * container's config), or reserved labels or a pool name (the cold path refuses them with its own error).
 */
export function poolableShape(spec: SandboxSpec, defaults: ShapeDefaults): Shape | null {
  if (spec.workspace !== undefined) return null;
  if (spec.env && Object.keys(spec.env).length > 0) return null;
  if (reservedLabelKeys(spec.labels).length > 0) return null;
  if (spec.name?.startsWith(POOL_NAME_PREFIX)) return null; // refused by the cold path, as reserved labels are
  return shapeOf(spec, defaults);
}

/** The shape a spec resolves to, with the defaults a cold create would apply. */
export function shapeOf(spec: Partial<SandboxSpec>, defaults: ShapeDefaults): Shape | null {
  const runtime = spec.runtime ?? defaults.runtime;
  if (!runtime) return null;
  const image = spec.image ?? defaults.image;
  // Only the limit fields are read; the rest of the context does not change them.
  const r = resolveSandbox(spec as SandboxSpec, {
    name: '',
    image,
    runtime,
    rootless: false,
    hostLimits: { nofileHard: 0, nprocHard: 0 },
    now: new Date(0),
    seccompProfile: null,
    wall: null,
  });
  return {
    image,
    runtime,
    memoryBytes: r.memoryBytes,
    cpus: r.cpus,
    pids: r.pids,
    network: r.network,
    readOnlyRoot: r.readOnlyRoot,
    tmpSizeBytes: r.tmpSizeBytes,
    diskBytes: r.diskBytes,
  };
}

/** A short stable digest: the warden.pool label, and how a request finds its pool. */
export function shapeKey(shape: Shape): string {
  const canonical = JSON.stringify(Object.keys(shape).map((k) => [k, shape[k as keyof Shape]]));
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/** The spec the pool creates a sandbox of this shape with (every field explicit). */
export function specOf(shape: Shape): SandboxSpec {
  return {
    image: shape.image,
    runtime: shape.runtime,
    memory: shape.memoryBytes,
    cpus: shape.cpus,
    pids: shape.pids,
    network: shape.network,
    readOnlyRoot: shape.readOnlyRoot,
    ...(shape.tmpSizeBytes !== null ? { tmpSize: shape.tmpSizeBytes } : {}),
    disk: shape.diskBytes,
  };
}
