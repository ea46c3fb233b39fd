// The report's timeline: every entry of the bundle is an item on its lane, naming its seq and linking
// to its row; samples become the resource charts; hostile text stays text. (The e2e spec parses the
// same HTML in Chromium, offline.)
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportBundle } from '../../../shared/types/ledger.js';
import type { ReportSample } from '../../../shared/types/ledger-report.js';
import { verifyBundle } from './bundle-verify.js';
import { exportBundle } from './export.js';
import type { Ledger } from './ledger.js';
import { laneOf, markOf } from './report-lanes.js';
import { renderReportHtml } from './report-html.js';
import { spread } from './report-timeline.js';
import { tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';

let t: TempLedger;
let l: Ledger;
let bundle: ReportBundle;
const HOSTILE = '</svg></title><script>alert(1)</script><img src=x onerror=alert(2)>\u202e';

beforeAll(() => {
  t = tempLedger();
  l = t.open();
  const sb = 'sb-timeline';
  l.append({ actor: 'user', sandboxId: sb, kind: 'sandbox.created', payload: { name: 'box', image: 'warden/base' } });
  l.append({
    actor: 'agent-1',
    sandboxId: sb,
    kind: 'policy.allowed',
    payload: { runId: 'r1', tool: 'exec', decision: { action: 'allow' } },
  });
  l.append({ actor: 'agent-1', sandboxId: sb, kind: 'exec.finished', payload: { runId: 'r1', argv: ['sh', '-c', HOSTILE], exitCode: 0 } });
  l.append({
    actor: 'agent-1',
    sandboxId: sb,
    kind: 'policy.denied',
    payload: { runId: 'r1', tool: 'exec', decision: { action: 'deny' } },
  });
  l.append({ actor: 'user', sandboxId: sb, kind: 'approval.decided', payload: { runId: 'r1', decision: 'approve-once' } });
  l.append({ actor: 'agent-1', sandboxId: sb, kind: 'exec.finished', payload: { runId: 'r1', argv: ['false'], exitCode: 1 } });
  l.append({ actor: 'system', sandboxId: sb, kind: 'net.connect', payload: { host: 'example.com', port: 443, decision: 'deny' } });
  l.append({ actor: 'user', sandboxId: sb, kind: 'snapshot.taken', payload: { tag: 'before' } });
  l.append({ actor: HOSTILE.replace(/[<>\u202e]/g, '_'), sandboxId: sb, kind: 'sandbox.destroyed', payload: {} });
  bundle = exportBundle(l);
});
afterAll(() => {
  l.close();
  t.cleanup();
});

function samplesAround(b: ReportBundle, n: number): ReportSample[] {
  const start = Date.parse(b.entries[0]!.time) - 5_000;
  return Array.from({ length: n }, (_, i) => ({
    t: start + i * 1000,
    cpuPct: (i * 37) % 180,
    memBytes: (64 + (i % 50)) * 1024 * 1024,
    memLimit: 512 * 1024 * 1024,
    netRx: i * 2048,
    netTx: i * 512,
    pids: 3 + (i % 5),
  }));
}

describe('report timeline', () => {
  it('puts every entry on its lane, marked by decision, naming its seq and linking to its row', () => {
    const html = renderReportHtml(bundle, verifyBundle(bundle));
    for (const e of bundle.entries) {
      const item = new RegExp(`<a class="item" href="#e-${e.seq}" data-seq="${e.seq}" data-lane="${laneOf(e)}" aria-label="#${e.seq} `);
      expect(html, `item ${e.seq}`).toMatch(item);
      expect(html.split(`<tr id="e-${e.seq}">`)).toHaveLength(2); // exactly one row to land on
    }
    expect(bundle.entries.map((e) => [e.kind, laneOf(e), markOf(e)])).toEqual([
      ['sandbox.created', 'engine', 'ok'],
      ['policy.allowed', 'calls', 'ok'],
      ['exec.finished', 'calls', 'ok'],
      ['policy.denied', 'calls', 'deny'],
      ['approval.decided', 'calls', 'ask'],
      ['exec.finished', 'calls', 'fail'],
      ['net.connect', 'network', 'deny'],
      ['snapshot.taken', 'snapshots', 'ok'],
      ['sandbox.destroyed', 'engine', 'ok'],
    ]);
    expect(html).toContain('No resource samples were exported with this report.');
  });

  it('draws the resource charts from samples and says they are not part of the signed ledger', () => {
    const html = renderReportHtml(bundle, verifyBundle(bundle), { samples: samplesAround(bundle, 40) });
    for (const chart of ['cpu', 'mem', 'rx', 'pids']) expect(html).toContain(`data-chart="${chart}"`);
    expect(html).toContain('40 readings');
    expect(html).toContain('not part of the signed ledger');
    expect(html).toMatch(/<rect class="band"[^>]*><title>[^<]*CPU up to \d+ %/);
  });

  it('keeps hostile text as text: no markup, no script, nothing fetched', () => {
    const html = renderReportHtml(bundle, verifyBundle(bundle), { samples: samplesAround(bundle, 3) });
    expect(html).not.toMatch(/<script|<img|<iframe|<object/i);
    // Inside the tags the template wrote, attribute values are quoted and escaped: no quote from a sandbox closes one.
    for (const m of html.matchAll(/aria-label="([^"]*)"/g)) expect(m[1]).not.toMatch(/[<>]/);
    expect(html).toContain('&lt;/svg&gt;&lt;/title&gt;&lt;script&gt;');
    expect(html).toContain('\\u202e'); // bidi override shown, not obeyed
    expect(html).not.toMatch(/(?:href|xlink:href)="(?!#e-\d+")/); // only links to its own rows
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
  });

  it('one entry and no samples still has a readable axis', () => {
    const one = { ...bundle, entries: bundle.entries.slice(0, 1) };
    const html = renderReportHtml(one, verifyBundle(one));
    expect(html).toMatch(/<text class="t"[^>]*>\d\d:\d\d:\d\d<\/text>/);
    expect(html.match(/<a class="item"/g)).toHaveLength(1);
  });
});

describe('spreading a burst of marks', () => {
  it('keeps marks apart, in time order, inside the axis, and leaves marks that do not crowd where they are', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1000, noNaN: true }), { maxLength: 300 }), (raw) => {
        const xs = [...raw].sort((a, b) => a - b);
        const out = spread(xs, 12, 0, 1000);
        expect(out).toHaveLength(xs.length);
        const gap = xs.length > 1 ? Math.min(12, 1000 / (xs.length - 1)) : 12;
        for (let i = 0; i < out.length; i++) {
          expect(out[i]!).toBeGreaterThanOrEqual(-1e-6);
          expect(out[i]!).toBeLessThanOrEqual(1000 + 1e-6);
          if (i > 0) expect(out[i]! - out[i - 1]!).toBeGreaterThanOrEqual(gap - 1e-6);
        }
        // Marks that do not crowd each other stay at their own moment.
        const apart =
          xs.every((x, i) => i === 0 || x - xs[i - 1]! >= 12) && (xs.length === 0 || (xs[0]! >= 0 && xs[xs.length - 1]! <= 1000));
        if (apart && xs.length * 12 <= 1000) expect(out).toEqual(xs);
      }),
      { numRuns: 300, seed: 42 },
    );
  });
});
