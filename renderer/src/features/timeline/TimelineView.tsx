// One timeline on screen: a toolbar (zoom, the whole window, follow live), the four resource graphs
// and the lanes under them on one time axis, a hover line with what ran then and what it cost. The
// component renders once per window it is given; everything after that is the controller's
// (timeline-controller.ts), outside React.
import { useEffect, useRef, useState } from 'react';
import type { ToolCallInfo } from '../../../../shared/types/run.js';
import { useServices } from '../../services.js';
import { useStore } from '../../store/index.js';
import { ledgerController } from '../../live/ledger-controller.js';
import { CHART_SPECS } from './timeline-charts.js';
import { CHART_HEIGHT, TimelineController } from './timeline-controller.js';
import { bindTimelineInput } from './timeline-input.js';
import { LANE_HEIGHT, LANES_HEIGHT } from './lanes-canvas.js';
import { LANE_TITLES, LANES } from './timeline-model.js';
import type { TimelineElements, TimelineOptions } from './timeline-types.js';
import './timeline.css';

interface Props {
  sandboxId: string;
  from: number | null;
  to: number | null;
  /** The calls lane's calls, read from the store (a run's, or every loaded run's in the sandbox). */
  selectCalls(state: ReturnType<typeof useStore.getState>): readonly ToolCallInfo[];
  /** What the whole window is, for the Fit button ("run", "sandbox's life"). */
  wholeLabel: string;
  testId: string;
  /** A heading, where the view around it has none for the timeline. */
  title?: string;
}

const NO_CALLS: readonly ToolCallInfo[] = [];

export function TimelineView({ sandboxId, from, to, selectCalls, wholeLabel, testId, title }: Props) {
  const { client, stats } = useServices();
  const navigate = useStore((s) => s.navigate);
  const refs = {
    body: useRef<HTMLDivElement>(null),
    lanes: useRef<HTMLDivElement>(null),
    lanesView: useRef<HTMLDivElement>(null),
    cursor: useRef<HTMLDivElement>(null),
    tip: useRef<HTMLDivElement>(null),
    announce: useRef<HTMLDivElement>(null),
    rangeLabel: useRef<HTMLSpanElement>(null),
    points: useRef<HTMLSpanElement>(null),
  };
  const holders = useRef<Array<HTMLDivElement | null>>([]);
  const ctl = useRef<TimelineController | null>(null);
  const [status, setStatus] = useState({ loading: true, error: null as string | null, items: 0, follow: to === null });
  const select = useRef(selectCalls);
  select.current = selectCalls;

  useEffect(() => {
    const el: TimelineElements = {
      body: refs.body.current!,
      holders: holders.current.map((h) => h!),
      lanes: refs.lanes.current!,
      lanesView: refs.lanesView.current!,
      cursor: refs.cursor.current!,
      tip: refs.tip.current!,
      announce: refs.announce.current!,
      rangeLabel: refs.rangeLabel.current!,
      pointsLabel: refs.points.current!,
    };
    const options: TimelineOptions = {
      client,
      stats,
      sandboxId,
      from,
      to,
      calls: () => select.current(useStore.getState()) ?? NO_CALLS,
      onCallsChanged: (fn) => {
        let last = select.current(useStore.getState());
        return useStore.subscribe((s) => {
          const next = select.current(s);
          if (next !== last) {
            last = next;
            fn();
          }
        });
      },
      openEntry: (seq) => {
        void ledgerController(client, useStore).showEntry(seq);
        navigate({ name: 'ledger' });
      },
      onStatus: setStatus,
    };
    const c = new TimelineController(options, el);
    ctl.current = c;
    const unbind = bindTimelineInput(c, el);
    return () => {
      unbind();
      c.dispose();
      ctl.current = null;
    };
    // The refs are stable; a new window (another run, the run ended) makes a new controller.
  }, [client, stats, sandboxId, from, to, navigate]);

  const say = status.error
    ? `could not load: ${status.error}`
    : status.loading
      ? 'loading…'
      : `${status.items} ${status.items === 1 ? 'item' : 'items'}`;
  return (
    <section className="tl" data-testid={testId} aria-label="Timeline">
      <div className="tl-toolbar">
        {title ? <h2 className="tl-title">{title}</h2> : null}
        <button type="button" className="btn small" onClick={() => ctl.current?.zoom(0.5)} aria-label="Zoom in" title="Zoom in (+)">
          +
        </button>
        <button type="button" className="btn small" onClick={() => ctl.current?.zoom(2)} aria-label="Zoom out" title="Zoom out (−)">
          −
        </button>
        <button
          type="button"
          className="btn small"
          onClick={() => ctl.current?.fit()}
          title={`Show the ${wholeLabel} (0)`}
          data-testid="tl-fit"
        >
          Whole {wholeLabel}
        </button>
        {to === null ? (
          <button
            type="button"
            className={`btn small${status.follow ? ' primary' : ''}`}
            aria-pressed={status.follow}
            onClick={() => ctl.current?.fit()}
            data-testid="tl-live"
          >
            Live
          </button>
        ) : null}
        <span ref={refs.rangeLabel} className="mono muted small tl-range" data-testid="tl-range" />
        <span className="grow" />
        <span className="muted small" data-testid="tl-status" data-loading={status.loading ? 'true' : 'false'} data-items={status.items}>
          {say}
        </span>
        {/* Written by the controller as samples come (no React render per sample). */}
        <span ref={refs.points} className="muted small" data-testid="tl-points" />
      </div>
      <div
        ref={refs.body}
        className="tl-body"
        tabIndex={0}
        role="group"
        aria-label="Timeline graphs and events. Left and right arrows step through the items, Enter opens an item's ledger entry, plus and minus zoom, Shift with the arrows pans, 0 shows it whole."
        data-testid="tl-body"
      >
        {CHART_SPECS.map((spec, i) => (
          <div key={spec.key} className="tl-chart" data-testid={`tl-chart-${spec.key}`}>
            <span className="tl-chart-title">{spec.title}</span>
            <div ref={(node) => void (holders.current[i] = node)} className="tl-chart-plot" style={{ height: CHART_HEIGHT }} />
          </div>
        ))}
        <div ref={refs.lanes} className="tl-lanes" style={{ height: LANES_HEIGHT }} data-testid="tl-lanes" aria-hidden="true">
          {LANES.map((lane, i) => (
            <span key={lane} className="tl-lane-title" style={{ top: i * LANE_HEIGHT, height: LANE_HEIGHT }}>
              {LANE_TITLES[lane]}
            </span>
          ))}
          <div ref={refs.lanesView} className="tl-view" />
          {/* Time labels the plot's edges cut through fade out (the axis pans by moving, not redrawing). */}
          <span className="tl-axis-fade left" />
          <span className="tl-axis-fade right" />
        </div>
        <div ref={refs.cursor} className="tl-cursor" hidden />
        <div ref={refs.tip} className="tl-tip" data-testid="tl-tip" hidden />
      </div>
      <div ref={refs.announce} className="tl-sr" aria-live="polite" data-testid="tl-announce" />
    </section>
  );
}
