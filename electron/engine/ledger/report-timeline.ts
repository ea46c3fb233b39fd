// The HTML report's timeline: one time axis with the resource samples (if the export was given any)
// on top and, aligned beneath them, the bundle's tool calls (with their decisions), engine events,
// network connections and snapshots. Plain inline SVG: no script, nothing fetched, readable offline
// under the report's `default-src 'none'` CSP. Every item names its seq and links to its row (#e-SEQ);
// hovering an item or a moment shows what it was (SVG <title>). All text goes through esc().
import type { LedgerEntry } from '../../../shared/types/ledger.js';
import type { ReportSample } from '../../../shared/types/ledger-report.js';
import { downsample, laneOf, LANES, markOf, moments, summaryOf, type Lane } from './report-lanes.js';

type Esc = (text: string) => string;

const W = 1000;
const LEFT = 118;
const RIGHT = 12;
const CHART_H = 44;
const LANE_H = 34;
/** Marks closer than this (in viewBox units) are spread apart. */
const MARK_GAP = 12;
const AXIS_H = 26;

interface Scale {
  x(t: number): number;
  from: number;
  to: number;
}

function scaleOf(times: number[]): Scale {
  let from = Math.min(...times);
  let to = Math.max(...times);
  if (!(to > from)) {
    from -= 30_000; // a single moment: a minute around it
    to += 30_000;
  }
  const span = to - from;
  return { from, to, x: (t) => LEFT + ((t - from) / span) * (W - LEFT - RIGHT) };
}

const fmt = (n: number, digits = 0) => n.toFixed(digits);
const clock = (t: number) => new Date(t).toISOString().slice(11, 19);

const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map((s) => s * 1000);

/** Tick times on whole seconds, minutes or hours: about six of them inside [from, to]. */
function niceTicks(from: number, to: number): number[] {
  const step = STEPS.find((s) => (to - from) / s <= 7) ?? Math.ceil((to - from) / 6 / 86_400_000) * 86_400_000;
  const out: number[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) out.push(t);
  return out;
}

function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v >= 10 || u === 0 ? 0 : 1)} ${units[u]}`;
}

interface Series {
  label: string;
  values: Array<[number, number]>; // [t, value]
  max: number;
  text: (v: number) => string;
  cls: string;
  /** A second line drawn dashed (the memory limit, sent bytes). */
  second?: { values: Array<[number, number]>; cls: string; label: string };
}

function rates(samples: ReportSample[], pick: (s: ReportSample) => number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 1; i < samples.length; i++) {
    const dt = (samples[i]!.t - samples[i - 1]!.t) / 1000;
    const d = pick(samples[i]!) - pick(samples[i - 1]!);
    if (dt > 0) out.push([samples[i]!.t, Math.max(0, d / dt)]); // a counter reset (restart) reads as 0, not negative
  }
  return out;
}

function seriesOf(samples: ReportSample[]): Series[] {
  const s = downsample(samples, 600);
  const top = (vs: Array<[number, number]>, floor: number) => Math.max(floor, ...vs.map((v) => v[1]));
  const cpu = s.map((x): [number, number] => [x.t, x.cpuPct]);
  const mem = s.map((x): [number, number] => [x.t, x.memBytes]);
  const limit = s.filter((x) => x.memLimit > 0).map((x): [number, number] => [x.t, x.memLimit]);
  const rx = rates(s, (x) => x.netRx);
  const tx = rates(s, (x) => x.netTx);
  const pids = s.map((x): [number, number] => [x.t, x.pids]);
  return [
    { label: 'CPU', values: cpu, max: top(cpu, 100), text: (v) => `${fmt(v)} %`, cls: 'cpu' },
    {
      label: 'Memory',
      values: mem,
      max: top([...mem, ...limit], 1024 * 1024),
      text: bytes,
      cls: 'mem',
      ...(limit.length ? { second: { values: limit, cls: 'limit', label: 'limit' } } : {}),
    },
    {
      label: 'Network',
      values: rx,
      max: top([...rx, ...tx], 1024),
      text: (v) => `${bytes(v)}/s`,
      cls: 'rx',
      second: { values: tx, cls: 'tx', label: 'sent' },
    },
    { label: 'Processes', values: pids, max: top(pids, 4), text: (v) => fmt(v), cls: 'pids' },
  ];
}

function line(values: Array<[number, number]>, sc: Scale, y0: number, max: number): string {
  return values.map(([t, v]) => `${fmt(sc.x(t), 1)},${fmt(y0 + CHART_H - (Math.min(v, max) / max) * (CHART_H - 4), 1)}`).join(' ');
}

function charts(series: Series[], sc: Scale, esc: Esc): string {
  return series
    .map((s, i) => {
      const y0 = i * (CHART_H + 6);
      const second = s.second ? `<polyline class="l ${s.second.cls}" points="${line(s.second.values, sc, y0, s.max)}"/>` : '';
      return (
        `<g class="chart" data-chart="${esc(s.cls)}"><rect class="bg" x="${LEFT}" y="${y0}" width="${W - LEFT - RIGHT}" height="${CHART_H}"/>` +
        `<text class="lane-label" x="6" y="${y0 + 16}">${esc(s.label)}</text>` +
        `<text class="max" x="6" y="${y0 + 30}">max ${esc(s.text(s.max))}</text>` +
        (s.second ? `<text class="max" x="6" y="${y0 + 41}">dashed: ${esc(s.second.label)}</text>` : '') +
        `<polyline class="l ${s.cls}" points="${line(s.values, sc, y0, s.max)}"/>${second}</g>`
      );
    })
    .join('\n');
}

function marker(kind: ReturnType<typeof markOf>, x: number, y: number): string {
  const p = (n: number) => fmt(n, 1);
  switch (kind) {
    case 'deny':
      return `<rect class="m deny" x="${p(x - 4.5)}" y="${p(y - 4.5)}" width="9" height="9"/>`;
    case 'ask':
      return `<path class="m ask" d="M${p(x)} ${p(y - 6)}L${p(x + 6)} ${p(y)}L${p(x)} ${p(y + 6)}L${p(x - 6)} ${p(y)}Z"/>`;
    case 'fail':
      return `<path class="m fail" d="M${p(x)} ${p(y - 6)}L${p(x + 6)} ${p(y + 5)}L${p(x - 6)} ${p(y + 5)}Z"/>`;
    default:
      return `<circle class="m ok" cx="${p(x)}" cy="${p(y)}" r="4.5"/>`;
  }
}

function legend(): string {
  const keys: Array<[ReturnType<typeof markOf>, string]> = [
    ['ok', 'done or allowed'],
    ['deny', 'denied'],
    ['ask', 'asked, or decided by a person'],
    ['fail', 'failed, killed or lost'],
  ];
  return keys
    .map(([m, text]) => `<span class="key"><svg width="14" height="14" aria-hidden="true">${marker(m, 7, 7.5)}</svg>${text}</span>`)
    .join(' ');
}

/** The timeline section of the report; '' when there is nothing to draw. */
export function renderTimeline(entries: LedgerEntry[], samples: ReportSample[], esc: Esc): string {
  const timed = entries.map((e) => ({ e, t: Date.parse(e.time) })).filter((x) => Number.isFinite(x.t));
  const sorted = [...samples].filter((s) => Number.isFinite(s.t)).sort((a, b) => a.t - b.t);
  if (timed.length === 0 && sorted.length === 0) return '';
  const sc = scaleOf([...timed.map((x) => x.t), ...sorted.map((s) => s.t)]);
  const series = sorted.length > 1 ? seriesOf(sorted) : [];
  const chartsH = series.length ? series.length * (CHART_H + 6) + 4 : 0;
  const used = LANES.filter((lane) => lane.always || timed.some((x) => laneOf(x.e) === lane.id));
  const laneY = new Map<Lane, number>(used.map((lane, i) => [lane.id, chartsH + i * LANE_H + LANE_H / 2]));
  const axisY = chartsH + used.length * LANE_H + 4;
  const height = axisY + AXIS_H;

  const lanes = used
    .map((lane) => {
      const y = laneY.get(lane.id)!;
      return `<line class="lane" x1="${LEFT}" x2="${W - RIGHT}" y1="${y}" y2="${y}"/><text class="lane-label" x="6" y="${y + 4}">${esc(lane.label)}</text>`;
    })
    .join('\n');
  // Moments: hover bands, each saying what ran in it and what it cost (under the items, which catch their own hover).
  const bands = moments(timed, sorted, sc.from, sc.to, 120)
    .map((m) => {
      const x1 = sc.x(m.from);
      const w = Math.max(0.5, sc.x(m.to) - x1);
      return `<rect class="band" x="${fmt(x1, 1)}" y="0" width="${fmt(w, 2)}" height="${axisY}"><title>${esc(m.text(bytes))}</title></rect>`;
    })
    .join('');
  // Items of a burst (a run's calls come milliseconds apart) are spread along their lane, each tied to
  // its true moment by a leader line, so every one stays visible and clickable.
  const byLane = new Map<Lane, Array<{ e: LedgerEntry; t: number }>>();
  for (const x of timed) byLane.set(laneOf(x.e), [...(byLane.get(laneOf(x.e)) ?? []), x]);
  const items = [...byLane.entries()]
    .flatMap(([lane, list]) => {
      const sortedList = [...list].sort((a, b) => a.t - b.t || a.e.seq - b.e.seq);
      const xs = spread(
        sortedList.map((x) => sc.x(x.t)),
        MARK_GAP,
        LEFT + 5,
        W - RIGHT - 5,
      );
      const y = laneY.get(lane)!;
      return sortedList.map(({ e, t }, i) => {
        const at = sc.x(t);
        const x = xs[i]!;
        const label = `#${e.seq} ${e.kind} · ${e.time.slice(11, 23)} UTC · ${summaryOf(e)}`;
        const leader =
          Math.abs(x - at) > 1 ? `<line class="leader" x1="${fmt(x, 1)}" y1="${y + 2}" x2="${fmt(at, 1)}" y2="${y + 8}"/>` : '';
        return (
          `<a class="item" href="#e-${e.seq}" data-seq="${e.seq}" data-lane="${lane}" aria-label="${esc(label)}">` +
          `<line class="when" x1="${fmt(at, 1)}" x2="${fmt(at, 1)}" y1="${y + 8}" y2="${y + 12}"/>${leader}${marker(markOf(e), x, y - 3)}<title>${esc(label)}</title></a>`
        );
      });
    })
    .join('\n');
  const ticks = niceTicks(sc.from, sc.to)
    .map((t) => {
      const x = sc.x(t);
      return `<line class="tick" x1="${fmt(x, 1)}" x2="${fmt(x, 1)}" y1="${chartsH}" y2="${axisY + 4}"/><text class="t" x="${fmt(x, 1)}" y="${axisY + 18}" text-anchor="middle">${clock(t)}</text>`;
    })
    .join('');
  const note = sorted.length
    ? `<p class="muted">Resource samples: ${sorted.length} readings from the control panel's history, ${esc(new Date(sorted[0]!.t).toISOString())} to ${esc(new Date(sorted[sorted.length - 1]!.t).toISOString())}. They are not part of the signed ledger.</p>`
    : '<p class="muted">No resource samples were exported with this report.</p>';
  return `<section class="timeline" aria-labelledby="timeline-title">
<h2 id="timeline-title">Timeline</h2>
<p>${timed.length} entries from ${esc(new Date(sc.from).toISOString())} to ${esc(new Date(sc.to).toISOString())} (UTC). Each mark is an entry: hover for what it was, click for its row. </p>
<p class="legend">${legend()}</p>
${note}
<svg class="tl" viewBox="0 0 ${W} ${height}" width="100%" role="group" aria-label="Timeline of ${timed.length} entries" preserveAspectRatio="xMinYMin meet">
${bands}
${charts(series, sc, esc)}
${lanes}
${ticks}
${items}
</svg>
</section>`;
}

/**
 * 1-D label placement: positions for sorted `xs` at least `gap` apart, each as near its own x as the
 * others allow (overlapping runs are merged and centred on their mean), kept within [lo, hi]. When
 * everything cannot fit, the gap shrinks to fit.
 */
export function spread(xs: number[], gap: number, lo: number, hi: number): number[] {
  if (xs.length === 0) return [];
  const g = xs.length > 1 ? Math.min(gap, (hi - lo) / (xs.length - 1)) : gap;
  const clusters: Array<{ n: number; sum: number; left: number }> = [];
  const place = (c: { n: number; sum: number; left: number }) => {
    const width = (c.n - 1) * g;
    c.left = Math.min(Math.max(c.sum / c.n - width / 2, lo), hi - width);
  };
  for (const x of xs) {
    const c = { n: 1, sum: x, left: x };
    place(c);
    clusters.push(c);
    while (clusters.length > 1) {
      const b = clusters[clusters.length - 1]!;
      const a = clusters[clusters.length - 2]!;
      if (a.left + (a.n - 1) * g + g <= b.left + 1e-9) break;
      clusters.pop();
      a.n += b.n;
      a.sum += b.sum;
      place(a);
    }
  }
  return clusters.flatMap((c) => Array.from({ length: c.n }, (_, i) => c.left + i * g));
}
