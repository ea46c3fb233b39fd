import { z } from 'zod';
import { ExecRequestSchema } from './exec.js';
import { AGENT_NAME_PATTERN } from './agent-name.js';
import type { ApprovalInfo, RunDetail, RunInfo, ToolCallInfo } from './run.js';

// Bodies and queries of the agent HTTP API (electron/server), validated at the door.

/** What an agent may send to exec: no `user` (policy decides), no output cap (the run budget does). */
export const ApiExecBodySchema = ExecRequestSchema.pick({ cmd: true, cwd: true, env: true, timeoutMs: true, stdin: true }).strict();
export type ApiExecBody = z.infer<typeof ApiExecBodySchema>;

/** A path in the sandbox workspace: relative to /workspace, or absolute under it. */
export const WorkspacePathSchema = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'path must not contain NUL bytes');

export const FileQuerySchema = z.object({ path: WorkspacePathSchema }).strict();
export const FileListQuerySchema = z.object({ path: WorkspacePathSchema.optional() }).strict();

export interface FileEntry {
  name: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
  mode: number;
  mtime: string;
}

export interface FileList {
  path: string;
  entries: FileEntry[];
}

/** What a move left at its destination. */
export interface FileMoved {
  path: string;
  entry: FileEntry;
}

export interface DirMade {
  path: string;
  /** False when the directory was already there. */
  created: boolean;
}

export interface FileWritten {
  path: string;
  bytes: number;
  sha256: string;
}

export { AGENT_NAME_PATTERN };
export const AgentNameSchema = z
  .string()
  .regex(AGENT_NAME_PATTERN, 'agent names are letters, digits, _ . - (at most 63, starting with a letter or digit)');

export const TokenCreateSchema = z.object({ agent: AgentNameSchema }).strict();

export interface TokenInfo {
  id: string;
  agent: string;
  role: 'agent' | 'user';
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** Events of an exec stream (NDJSON). Output is UTF-8 text when the bytes are valid UTF-8, else base64. */
export type ExecStreamEvent =
  | { type: 'start'; runId: string; callId: string }
  | { type: 'approval'; id: string; deadline: string; reason: string }
  | { type: 'stdout' | 'stderr'; data: string; encoding?: 'base64' }
  | {
      type: 'exit';
      code: number;
      durationMs: number;
      timedOut: boolean;
      truncated: boolean;
      stdoutBytes: number;
      stderrBytes: number;
      oomKilled: boolean;
      callId: string;
    }
  | { type: 'error'; error: { code: string; message: string; hint?: string } };

/** Events of a followed run (NDJSON): its state now, then each call and run change until it ends. */
export type RunStreamEvent = { type: 'snapshot'; run: RunDetail } | { type: 'call'; call: ToolCallInfo } | { type: 'run'; run: RunInfo };

/** Messages of /v1/live (a large one arrives as `part` frames, electron/server/live-frames.ts). */
export type LiveMessage =
  | { type: 'snapshot'; payload: { runs: RunInfo[]; approvals: ApprovalInfo[] } }
  | { type: 'run.updated'; payload: RunInfo }
  | { type: 'run.call'; payload: ToolCallInfo }
  | { type: 'approval.requested' | 'approval.decided'; payload: ApprovalInfo }
  | { type: 'error'; payload: { message: string } };

/** Where a running server says it listens (WARDEN_HOME/server.json, 0600): no token in it. */
export interface ServerFile {
  pid: number;
  port: number;
  url: string;
  startedAt: string;
}

/** Header naming the run a call belongs to (else one run per agent and sandbox). */
export const RUN_HEADER = 'x-warden-run';
export const RunKeySchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/, 'X-Warden-Run is 1–128 letters, digits, _ . : -');

/** POST /v1/sandboxes/{id}/ttl: the sandbox expires this many seconds from now; null: never (the user only). */
export const TtlRequestSchema = z
  .object({
    ttlSeconds: z
      .number()
      .int()
      .positive()
      .max(365 * 24 * 3600)
      .nullable(),
  })
  .strict();
export type TtlRequest = z.infer<typeof TtlRequestSchema>;
