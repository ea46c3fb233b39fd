// What an agent changed in a sandbox's /workspace: since the sandbox was created, or since a run
// started. Crosses every door (HTTP, CLI --json); the texts in it come from inside a sandbox and are
// untrusted: shown as text, never as HTML.

export type WorkspaceChangeKind = 'added' | 'modified' | 'deleted';

/** One side of a changed file: what the manifest saw. */
export interface WorkspaceFileState {
  type: 'file' | 'symlink' | 'other' | 'unreadable';
  size: number;
  /** Permission bits (e.g. 0o644 as 420). */
  mode: number;
  /** SHA-256 hex of the bytes (a symlink: of its target); null when it could not be read. */
  sha256: string | null;
}

export interface WorkspaceFileChange {
  /** Relative to /workspace. */
  path: string;
  change: WorkspaceChangeKind;
  before: WorkspaceFileState | null;
  after: WorkspaceFileState | null;
  /** A unified diff of the text (--- a/… +++ b/…), or null: binary, too large, content not kept, or only the mode changed. */
  diff: string | null;
  /** For a person, always: "text, +3 −1", "binary, 120 → 340 bytes", "mode 644 → 755" … */
  summary: string;
  linesAdded: number;
  linesRemoved: number;
}

export interface WorkspaceDiff {
  sandboxId: string;
  /** What the diff is measured from: the sandbox at create, or a run before its first exec or file write. */
  base: { kind: 'sandbox' | 'run'; id: string; takenAt: string };
  files: WorkspaceFileChange[];
  totals: Record<WorkspaceChangeKind, number>;
  /** The workspace (or its baseline) held more files than a manifest lists: changes past that are not shown. */
  truncated: boolean;
}
