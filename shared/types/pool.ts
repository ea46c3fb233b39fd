// The warm pool's config (WARDEN_HOME/pool.yaml) and what the pool tells a UI: started, attested
// sandboxes per shape, waiting to be claimed by a create. Sizes read like the spec's ("2g").
import { z } from 'zod';
import { SandboxSpecSchema } from './sandbox.js';
import { parseByteSize } from './units.js';

/** What makes two sandboxes interchangeable: everything that changes the container itself. */
export const PoolShapeSchema = SandboxSpecSchema.pick({
  image: true,
  runtime: true,
  memory: true,
  cpus: true,
  pids: true,
  network: true,
  readOnlyRoot: true,
  tmpSize: true,
  disk: true,
}).strict();

const memoryTotal = z.union([z.number().int().min(0), z.string()]).transform((value, ctx) => {
  const bytes = typeof value === 'number' ? value : parseByteSize(value);
  if (bytes === null) {
    ctx.addIssue({ code: 'custom', message: `maxMemory "${String(value)}" is not a size: use bytes or e.g. 2g` });
    return z.NEVER;
  }
  return bytes;
});

export const POOL_DEFAULTS = {
  /** Two of each shape: a second create right after the first is warm too. */
  size: 2,
  /** The memory limits of all pooled sandboxes together (idle ones use a few MiB of it). */
  maxMemoryBytes: 2 * 1024 ** 3,
} as const;

export const PoolConfigSchema = z
  .object({
    /** Sandboxes kept ready per shape; 0 turns the pool off. */
    size: z.number().int().min(0).max(16).default(POOL_DEFAULTS.size),
    /** Bound on the sum of the pooled sandboxes' memory limits. */
    maxMemory: memoryTotal.default(POOL_DEFAULTS.maxMemoryBytes),
    /** The shapes to keep warm; {} is the default sandbox (what a create with no options asks for). */
    shapes: z.array(PoolShapeSchema).max(16).default([{}]),
    /** Podman labels on pooled sandboxes (not their owners'): to find them with podman ps; specs mark theirs to sweep. */
    labels: z
      .record(z.string().max(128), z.string().max(1024))
      .refine((l) => Object.keys(l).every((k) => !k.startsWith('warden.')), 'labels may not use the reserved warden. prefix')
      .default({}),
  })
  .strict();

export type PoolConfigInput = z.input<typeof PoolConfigSchema>;
export type PoolConfig = z.output<typeof PoolConfigSchema>;
export type PoolShapeSpec = z.output<typeof PoolShapeSchema>;

export interface PoolShapeStatus {
  /** Stable digest of the shape (the warden.pool label of its sandboxes). */
  key: string;
  image: string;
  runtime: string;
  memoryBytes: number;
  network: string;
  /** Started, attested and waiting. */
  ready: number;
  target: number;
}

export interface PoolStatus {
  enabled: boolean;
  /** Ready sandboxes over all shapes (what "2 warm" counts). */
  ready: number;
  shapes: PoolShapeStatus[];
}
