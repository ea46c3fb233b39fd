// The effect of an asked-for write in its approval: the diff (or, for binary and large files, the
// summary with sizes and digests) exactly as the engine computed it when the ask was raised, whole
// and as text, with the sha256 the decision's ledger entry will carry.
import type { ApprovalEffect } from '../../../../shared/types/approval-effect.js';
import { UnifiedText } from '../changes/DiffText.js';

export function ApprovalEffectView({ effect }: { effect: ApprovalEffect }) {
  const what = effect.kind === 'text' ? `+${effect.linesAdded} −${effect.linesRemoved} lines` : 'no text diff';
  return (
    <div className="approval-effect" data-testid="approval-effect" data-kind={effect.kind}>
      <div className="approval-effect-head small muted">
        <span>
          {effect.before ? 'The change it would make' : 'The new file it would make'} ({what})
        </span>{' '}
        <span
          className="mono"
          title={`sha256 of this text, recorded with the decision: ${effect.sha256}`}
          data-testid="approval-effect-digest"
        >
          sha256 {effect.sha256.slice(0, 12)}…
        </span>
      </div>
      {/* The whole text, never cut: it scrolls. */}
      <pre
        className="approval-effect-text"
        data-testid="approval-effect-text"
        tabIndex={0}
        aria-label={`What the write does to ${effect.path}`}
      >
        {effect.kind === 'text' ? <UnifiedText text={effect.text} /> : effect.text}
      </pre>
    </div>
  );
}
