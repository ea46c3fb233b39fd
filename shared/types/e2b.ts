// The messages of the E2B door (electron/server/e2b), written from E2B's public OpenAPI and envd
// .proto specs rather than copied from the SDK: REST bodies of the control plane, and envd's
// process.Process and filesystem.Filesystem messages in the protobuf JSON mapping the SDK sends
// (lowerCamelCase fields, bytes as base64, enums by name, int64 as text). Requests are zod schemas
// (validated at the door); answers are types. Unknown fields are dropped, as a proto3 reader does.
import { z } from 'zod';

const EnvsSchema = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'env names are letters, digits and _'), z.string());
const MetadataSchema = z.record(z.string().min(1).max(128), z.string().max(1024));

// ---- the REST control plane ----

/** POST /sandboxes and /v2/sandboxes (NewSandbox). What Warden cannot do is refused, never ignored. */
export const E2bNewSandboxSchema = z.object({
  templateID: z.string().min(1).max(256),
  /** Seconds until the sandbox is destroyed (Warden's TTL). */
  timeout: z
    .number()
    .int()
    .positive()
    .max(30 * 24 * 3600)
    .optional(),
  metadata: MetadataSchema.nullish(),
  envVars: EnvsSchema.nullish(),
  autoPause: z.boolean().nullish(),
  secure: z.boolean().nullish(),
  allow_internet_access: z.boolean().nullish(),
  mcp: z.unknown().optional(),
  network: z.unknown().optional(),
  volumeMounts: z.array(z.unknown()).optional(),
});
export type E2bNewSandbox = z.infer<typeof E2bNewSandboxSchema>;

/** GET /v2/sandboxes: filters (metadata as `k=v&k2=v2`, states comma-separated); one page holds every match. */
export const E2bListQuerySchema = z.object({
  metadata: z.string().max(8192).optional(),
  state: z.string().max(64).optional(),
  template: z.string().max(256).optional(),
  startedAfter: z.string().max(64).optional(),
  order: z.string().max(16).optional(),
  limit: z.string().max(16).optional(),
  nextToken: z.string().max(1024).optional(),
});
export type E2bListQuery = z.infer<typeof E2bListQuerySchema>;

/** GET /sandboxes/{id}/metrics: a time range (seconds); Warden answers with one sample, now. */
export const E2bMetricsQuerySchema = z.object({ start: z.string().max(16).optional(), end: z.string().max(16).optional() });

/** One metrics sample (E2B's SandboxMetric). */
export interface E2bMetric {
  timestamp: string;
  timestampUnix: number;
  cpuCount: number;
  cpuUsedPct: number;
  memUsed: number;
  memTotal: number;
  memCache: number;
  diskUsed: number;
  diskTotal: number;
}

/** POST /v2/sandboxes/{id}/connect: a timeout that only ever extends, and how to resume a paused one (`memory: false`, a reboot, Warden cannot). */
export const E2bConnectSchema = z.object({ timeout: z.number().int().min(0).optional(), memory: z.boolean().optional() });
/** POST /sandboxes/{id}/timeout (Sandbox.setTimeout): seconds from now until the sandbox is destroyed. */
export const E2bTimeoutSchema = z.object({
  timeout: z
    .number()
    .int()
    .positive()
    .max(30 * 24 * 3600),
});
/** POST /sandboxes/{id}/pause: `memory: false` (keep only the files, reboot on resume) Warden cannot do. */
export const E2bPauseSchema = z.object({ memory: z.boolean().nullish() });
export const E2bSandboxParamsSchema = z.object({ sandboxID: z.string().min(1).max(128) });

/** The answer to create and connect (Sandbox). */
export interface E2bSandbox {
  sandboxID: string;
  templateID: string;
  clientID: string;
  envdVersion: string;
  envdAccessToken: string;
  domain: null;
  trafficAccessToken: null;
}

/** One sandbox of a list (ListedSandbox); get adds its access token (SandboxDetail). */
export interface E2bListedSandbox {
  sandboxID: string;
  templateID: string;
  alias: string;
  clientID: string;
  startedAt: string;
  endAt: string;
  cpuCount: number;
  memoryMB: number;
  diskSizeMB: number;
  metadata: Record<string, string>;
  state: 'running' | 'paused';
  envdVersion: string;
}

/** Every REST error: the HTTP status again, and a message for a person. */
export interface E2bApiError {
  code: number;
  message: string;
}

// ---- envd: process.Process ----

export const ProcessConfigSchema = z.object({
  cmd: z.string().min(1),
  args: z.array(z.string()).default([]),
  envs: EnvsSchema.default({}),
  cwd: z.string().min(1).optional(),
});
export type ProcessConfig = z.output<typeof ProcessConfigSchema>;

/** A pseudo-terminal's size, as StartRequest.pty and UpdateRequest.pty carry it. */
export const PtySchema = z.object({
  size: z.object({ cols: z.number().int().min(1).max(1000), rows: z.number().int().min(1).max(1000) }),
});

export const ProcessStartRequestSchema = z.object({
  process: ProcessConfigSchema,
  /** A pseudo-terminal of this size (sandbox.pty.create): the command's input and output are the terminal's. */
  pty: PtySchema.nullish(),
  tag: z.string().max(256).optional(),
  stdin: z.boolean().optional(),
});

/** A process is named by the pid Warden gave it, or by its tag. */
export const ProcessSelectorSchema = z.object({ pid: z.number().int().nonnegative().optional(), tag: z.string().optional() });
export const ProcessSignalRequestSchema = z.object({
  process: ProcessSelectorSchema,
  signal: z.enum(['SIGNAL_UNSPECIFIED', 'SIGNAL_SIGTERM', 'SIGNAL_SIGKILL']).default('SIGNAL_UNSPECIFIED'),
});
export const ProcessListRequestSchema = z.object({});

/** One event of a Start stream: exactly one of these fields. Output bytes are base64. */
export type ProcessEvent =
  | { start: { pid: number } }
  | { data: { stdout: string } | { stderr: string } | { pty: string } }
  | { end: { exitCode: number; exited: boolean; status: string; error?: string } }
  | { keepalive: Record<string, never> };

export interface ProcessInfo {
  config: ProcessConfig;
  pid: number;
  tag?: string;
}

// ---- envd: filesystem.Filesystem ----

export const FsPathRequestSchema = z.object({ path: z.string().min(1).max(4096) });
export const FsMoveRequestSchema = z.object({ source: z.string().min(1).max(4096), destination: z.string().min(1).max(4096) });
export const FsListDirRequestSchema = FsPathRequestSchema.extend({ depth: z.number().int().min(0).default(1) });

/** WatchDir: events under `path` (with `recursive`, its whole tree), as Warden polls them (envd-watch.ts). */
export const FsWatchDirRequestSchema = FsPathRequestSchema.extend({
  recursive: z.boolean().default(false),
  includeEntry: z.boolean().default(false),
  allowNetworkMounts: z.boolean().default(false),
});

export type FsEventTypeName = 'EVENT_TYPE_CREATE' | 'EVENT_TYPE_WRITE' | 'EVENT_TYPE_REMOVE' | 'EVENT_TYPE_RENAME' | 'EVENT_TYPE_CHMOD';

/** One message of a WatchDir stream: exactly one of these fields. */
export type WatchDirEvent =
  | { start: Record<string, never> }
  | { filesystem: { name: string; type: FsEventTypeName; entry?: EntryInfo } }
  | { keepalive: Record<string, never> };

export type FileTypeName = 'FILE_TYPE_UNSPECIFIED' | 'FILE_TYPE_FILE' | 'FILE_TYPE_DIRECTORY' | 'FILE_TYPE_SYMLINK';

export interface EntryInfo {
  name: string;
  type: FileTypeName;
  path: string;
  /** int64, as text. */
  size: string;
  mode: number;
  permissions: string;
  owner: string;
  group: string;
  modifiedTime: string;
}

/** What POST /files answers for each file written (envd's HTTP EntryInfo). */
export interface EnvdWrittenFile {
  name: string;
  type: 'file';
  path: string;
}

export const EnvdFilesQuerySchema = z.object({ path: z.string().min(1).max(4096).optional(), username: z.string().optional() });
