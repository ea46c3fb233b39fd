// A call's output as it streams in: plain text in a <pre> (never HTML), stderr set apart, bounded,
// scrolled to the newest line unless the reader scrolled up. Falls back to the call's preview when
// the stream was not seen (the window opened after the call ran).
import { useLayoutEffect, useRef } from 'react';
import { RUN_OUTPUT_STREAM_BYTES } from '../../../../shared/contracts/events.js';
import type { ToolCallInfo } from '../../../../shared/types/run.js';
import { formatByteSize } from '../../../../shared/types/units.js';
import { useStore } from '../../store/index.js';

export function CallOutputView({ call }: { call: ToolCallInfo }) {
  const out = useStore((s) => s.callOutput[call.id]);
  const pre = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  useLayoutEffect(() => {
    const el = pre.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [out]);
  const running = call.status === 'running';
  const done = call.endedAt !== null;
  const total = (call.bytes.stdout ?? 0) + (call.bytes.stderr ?? 0);
  if (!out && !call.preview) {
    if (running)
      return (
        <div className="call-output-note muted small" data-testid="call-output-waiting">
          running, no output yet…
        </div>
      );
    return done && call.status !== 'denied' ? <div className="call-output-note muted small">no output</div> : null;
  }
  const notes: string[] = [];
  if (!out)
    notes.push(
      `preview: the first ${formatByteSize(utf8Bytes(call.preview ?? ''))} of ${formatByteSize(total)} (this window was not following when it ran)`,
    );
  else if (done && (out.cut || total > RUN_OUTPUT_STREAM_BYTES))
    notes.push(`showing the first ${formatByteSize(RUN_OUTPUT_STREAM_BYTES)} of ${formatByteSize(total)}; the digests cover all of it`);
  if (out?.partial) notes.push('parts of it were sent while this window was not following; the digests cover all of it');
  if (call.truncated) notes.push("cut short: the run's output budget ran out");
  return (
    <>
      <pre
        ref={pre}
        className={`call-output${running ? ' live' : ''}`}
        data-testid="call-output"
        tabIndex={0}
        aria-label={`Output of call ${call.index}`}
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {out
          ? out.segments.map((seg, i) => (
              <span key={i} className={seg.stream === 'stderr' ? 'stderr' : undefined}>
                {seg.text}
              </span>
            ))
          : call.preview}
      </pre>
      {notes.map((n) => (
        <div key={n} className="call-output-note muted small" data-testid="call-output-note">
          {n}
        </div>
      ))}
    </>
  );
}

function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}
