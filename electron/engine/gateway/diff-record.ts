// A run's diff, handed to someone, goes into the ledger: `run.diffed` with the digest of exactly the
// diff returned (diff-digest.ts), who asked and what it was measured from. An export names the same
// digest in its `run.exported`, so the diff a person looked at, the patch made from it and the commit
// are bound together on the record.
import type { WorkspaceDiff } from '../../../shared/types/diff.js';
import { RUN_DIFFED_KIND, type RunDiffedPayload } from '../../../shared/types/run-export.js';
import type { RunInfo } from '../../../shared/types/run.js';
import { appendDurably, type AuditSink } from '../audit-sink.js';
import { diffDigest } from '../diff/diff-digest.js';
import type { WorkspaceChanges } from '../diff/workspace-changes.js';

/** The run's diff, recorded (durably) before it is returned; `actor`: who asked ("user", or the agent). */
export async function recordedDiff(audit: AuditSink, changes: WorkspaceChanges, run: RunInfo, actor: string): Promise<WorkspaceDiff> {
  const diff = await changes.diff('run', run.id);
  await recordDiff(audit, run, diff, actor);
  return diff;
}

export async function recordDiff(audit: AuditSink, run: RunInfo, diff: WorkspaceDiff, actor: string): Promise<RunDiffedPayload> {
  const payload: RunDiffedPayload = {
    runId: run.id,
    agent: run.agent,
    sandboxId: diff.sandboxId,
    diffSha256: diffDigest(diff),
    files: diff.files.length,
    totals: { added: diff.totals.added, modified: diff.totals.modified, deleted: diff.totals.deleted },
    base: { kind: diff.base.kind, id: diff.base.id, takenAt: diff.base.takenAt },
    truncated: diff.truncated,
  };
  await appendDurably(audit, [{ actor, sandboxId: diff.sandboxId, kind: RUN_DIFFED_KIND, payload }]);
  return payload;
}
