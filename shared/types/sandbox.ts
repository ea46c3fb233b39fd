import { z } from 'zod';
import { parseByteSize } from './units.js';
import type { ErrorInfo } from '../errors.js';

/** Names become container names and hostnames: keep them to what both accept. */
export const SANDBOX_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/;

export const RUNTIMES = ['runc', 'crun', 'runsc', 'krun'] as const;
export type RuntimeName = (typeof RUNTIMES)[number];

/** How each runtime is named to people (CLI help, the create dialog). */
export const RUNTIME_TITLES: Record<RuntimeName, string> = {
  runc: 'runc',
  crun: 'crun',
  runsc: 'gVisor (runsc)',
  krun: 'krun (microVM)',
};

/** The isolation tier of a sandbox's runtime, as the list and detail badge show it. */
export function runtimeTier(runtime: string): string {
  if (runtime === 'runsc') return 'gVisor';
  if (runtime === 'krun') return 'microVM';
  return runtime;
}

/**
 * none: no route anywhere. nat: outbound through the host. egress: no route anywhere either, the
 * only way out being Warden's egress proxy (electron/engine/egress/), which decides each connection.
 */
export const NETWORK_MODES = ['none', 'nat', 'egress'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

/** A size given as bytes or as text like "512m"; always parsed to bytes. */
const byteSize = (what: string, min: number, max: number) =>
  z.union([z.number(), z.string()]).transform((value, ctx) => {
    const bytes = typeof value === 'number' ? value : parseByteSize(value);
    if (bytes === null || !Number.isInteger(bytes)) {
      ctx.addIssue({
        code: 'custom',
        message: `${what} "${String(value)}" is not a size: use a number of bytes or a number with k, m or g (e.g. 512m)`,
      });
      return z.NEVER;
    }
    if (bytes < min || bytes > max) {
      ctx.addIssue({
        code: 'custom',
        message: `${what} ${String(value)} is out of range: it must be between ${min} and ${max} bytes`,
      });
      return z.NEVER;
    }
    return bytes;
  });

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

export const SandboxSpecSchema = z
  .object({
    name: z
      .string()
      .regex(SANDBOX_NAME_PATTERN, 'name must start with a letter or digit and hold only letters, digits, _ . - (at most 63)')
      .optional(),
    image: z.string().min(1).max(512).optional(),
    memory: byteSize('memory', 6 * MiB, 256 * GiB).optional(),
    cpus: z.number().positive().max(256).optional(),
    pids: z.number().int().min(16).max(1_000_000).optional(),
    network: z.enum(NETWORK_MODES).optional(),
    workspace: z
      .string()
      .refine((p) => p.startsWith('/'), 'workspace must be an absolute host path')
      .optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'env names are letters, digits and _'), z.string()).optional(),
    runtime: z.enum(RUNTIMES).optional(),
    labels: z.record(z.string().max(128), z.string().max(1024)).optional(),
    ttlSeconds: z
      .number()
      .int()
      .positive()
      .max(30 * 24 * 3600)
      .optional(),
    readOnlyRoot: z.boolean().optional(),
    tmpSize: byteSize('tmpSize', MiB, 64 * GiB).optional(),
    /** Bound on what the sandbox may write to its root filesystem (and a /tmp that is part of it). */
    disk: byteSize('disk', 32 * MiB, 4 * 1024 * GiB).optional(),
  })
  .strict();

/** What a caller sends (sizes may be text). */
export type SandboxSpecInput = z.input<typeof SandboxSpecSchema>;
/** What the engine works with (sizes in bytes). */
export type SandboxSpec = z.output<typeof SandboxSpecSchema>;

export const SANDBOX_STATES = ['created', 'running', 'paused', 'restarting', 'exited', 'removing', 'dead', 'unknown'] as const;
export type SandboxState = (typeof SANDBOX_STATES)[number];

export interface SandboxLimits {
  memoryBytes: number;
  cpus: number;
  pids: number;
  readOnlyRoot: boolean;
  tmpSizeBytes: number | null;
  /** The disk asked for (null: a sandbox from before disk limits). */
  diskBytes: number | null;
  /** Whether this host really bounds it (a loop-mounted filesystem per sandbox); false says the limit is not held. */
  diskEnforced: boolean;
}

export interface SandboxInfo {
  id: string;
  name: string;
  image: string;
  state: SandboxState;
  runtime: string;
  network: NetworkMode;
  workspace: string | null;
  limits: SandboxLimits;
  createdAt: string;
  startedAt: string | null;
  /** ISO time after which Warden destroys the sandbox, when a TTL was set. */
  expiresAt: string | null;
  labels: Record<string, string>;
  exitCode: number | null;
  oomKilled: boolean;
  /** Why it ended, when a limit ended it (under gVisor a limit ends the whole sandbox); null otherwise. */
  exitReason: string | null;
  /** Made before sandboxes were labelled with their Warden home: shown to the user, never to agents. */
  legacy?: boolean;
  /**
   * Set when Podman did not answer for this sandbox within the list's bound (a wedged sandbox): the
   * rest of this info is as last seen by this process, and this says why and what to do.
   */
  unreachable?: ErrorInfo;
}

/** A sandbox is named by its id, an id prefix, or its name. */
export const SandboxRefSchema = z.string().min(1).max(128);

/** The image built offline by resources/image/build.sh; WARDEN_IMAGE overrides it. */
export const DEFAULT_SANDBOX_IMAGE = 'localhost/warden-sandbox:1';

export const SANDBOX_DEFAULTS = {
  memoryBytes: 512 * MiB,
  cpus: 1,
  pids: 256,
  network: 'none' as NetworkMode,
  tmpSizeBytes: 64 * MiB,
  diskBytes: 4 * GiB,
} as const;
