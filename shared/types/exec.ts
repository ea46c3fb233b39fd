import { z } from 'zod';

export const ExecRequestSchema = z
  .object({
    /** argv, run directly; or a string, run with `sh -c`. */
    cmd: z.union([z.array(z.string()).min(1), z.string().min(1)]),
    cwd: z.string().startsWith('/').optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
    user: z.string().min(1).max(64).optional(),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .max(24 * 3600 * 1000)
      .optional(),
    /** Bytes kept per stream; the rest is counted and dropped, and the result says so. */
    outputLimitBytes: z.number().int().positive().optional(),
    stdin: z.string().optional(),
  })
  .strict();

export type ExecRequest = z.infer<typeof ExecRequestSchema>;

export interface ExecResult {
  exitCode: number;
  durationMs: number;
  timedOut: boolean;
  /** Total bytes the command wrote, including any dropped past the cap. */
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
  /** The kernel's OOM killer ended the command: the sandbox hit its memory limit. */
  oomKilled: boolean;
  /** Warden ended the command early, and why: "clientGone" when the caller stopped waiting for it. */
  cancelled?: string;
}

export const TerminalSizeSchema = z.object({
  cols: z.number().int().min(1).max(1000),
  rows: z.number().int().min(1).max(1000),
});
export type TerminalSize = z.infer<typeof TerminalSizeSchema>;
