// A snapshot of a sandbox as every door sees it: what `warden sandbox snapshots`, the agent API and
// MCP answer, and the requests they take. The engine keeps the manifest (engine/snapshot/); these are
// the shapes that cross a boundary, so callers' input is checked here before it reaches the engine.
import { z } from 'zod';
import { SANDBOX_NAME_PATTERN } from './sandbox.js';

/** Tags become part of an image tag and a directory name: keep them to what both accept. */
export const SNAPSHOT_TAG_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/;

export const SnapshotTagSchema = z
  .string()
  .regex(SNAPSHOT_TAG_PATTERN, 'a snapshot tag starts with a letter or digit and holds only letters, digits, _ . - (at most 64)');

export const SnapshotRequestSchema = z.object({ tag: SnapshotTagSchema.optional() }).strict();
export const ResetRequestSchema = z.object({ to: SnapshotTagSchema }).strict();
export const ForkRequestSchema = z
  .object({
    from: SnapshotTagSchema,
    name: z
      .string()
      .regex(SANDBOX_NAME_PATTERN, 'name must start with a letter or digit and hold only letters, digits, _ . - (at most 63)'),
  })
  .strict();

export interface SnapshotInfo {
  /** The sandbox's name when it was taken (snapshots are kept by name, and outlive the sandbox). */
  sandbox: string;
  /** The container it was taken from. */
  sandboxId: string;
  tag: string;
  createdAt: string;
  /** Podman image holding the root filesystem's changes (the image's config carries the sandbox's env). */
  image: string;
  imageId: string;
  /** Bytes of the committed layer alone (what the snapshot adds to the store), not of the base image. */
  rootBytes: number;
  /** sha256 of the /workspace tar archive as stored, and its size. */
  workspaceSha256: string;
  workspaceBytes: number;
  /** Who took it: "user" or an agent's name. */
  takenBy: string;
  /**
   * Taken by policy, not asked for: before a run's first changing call, or before a command a
   * snapshot-then-allow rule matched. Automatic snapshots are bounded per sandbox (oldest removed).
   */
  automatic?: { reason: 'run-start' | 'command'; runId: string; callId: string };
}
