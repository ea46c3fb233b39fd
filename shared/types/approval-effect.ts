// What an asked-for change would do, carried with its approval so a person decides on the effect and
// not only on the request: a file write's diff (the sandbox's current file against the bytes the
// agent sent). The engine computes it when the ask is raised; the approval prompt shows `text`
// exactly, whole, and the decision's ledger entry (approval.decided) carries its sha256.

/** One side of the write: what is there now, or what the agent sent. */
export interface EffectSide {
  size: number;
  /** SHA-256 hex of the bytes. */
  sha256: string;
}

export interface ApprovalEffect {
  /** The path the call writes, under /workspace. */
  path: string;
  /**
   * text: `text` is a unified diff (--- a/… +++ b/…; a new file from /dev/null). summary: it says in
   * words what changes, with sizes and digests (binary, too large to compare, or unreadable now).
   */
  kind: 'text' | 'summary';
  /** The file as it is now; null when there is none (a new file). */
  before: EffectSide | null;
  after: EffectSide;
  /** Exactly what the prompt shows, never cut by the UI (the engine bounds it: past that, a summary). */
  text: string;
  /** SHA-256 hex of `text` as UTF-8: what the decision's ledger entry binds. */
  sha256: string;
  linesAdded: number;
  linesRemoved: number;
}

/** Lines and characters of a diff an approval shows whole; a larger one is shown as a summary. */
export const EFFECT_MAX_LINES = 2_000;
export const EFFECT_MAX_CHARS = 256 * 1024;
