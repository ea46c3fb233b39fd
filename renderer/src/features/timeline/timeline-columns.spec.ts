// The graphs' cheap redraw against a brute force: the slice a window draws is exactly the samples
// inside it and one either side; per pixel column, the first, last, least and greatest sample are
// those of every sample in that column, and the polyline visits them (so a one-sample spike among
// thousands in a column is still drawn) with at most four vertices a column, left to right; the
// y range is the greatest shown. The strip's placement moves only within what was drawn.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { columnsOf, firstAfter, firstAtOrAfter, greatestIn, polyline, visibleSlice } from './timeline-columns.js';
import { around, bare, MARGIN, placement, rescaled } from './timeline-strip.js';

const series = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: -1000, max: 1000 })), { maxLength: 300 })
  .map((pairs) => {
    const times = [...new Set(pairs.map(([t]) => t))].sort((a, b) => a - b);
    return { times, values: times.map((_, i) => pairs[i]![1]) };
  });
const windowOf = fc.tuple(fc.integer({ min: -500, max: 5500 }), fc.integer({ min: 1, max: 6000 })).map(([a, w]) => [a, a + w] as const);

describe('visible slice', () => {
  it('is the samples in the window and one either side', () => {
    fc.assert(
      fc.property(series, windowOf, ({ times }, [t0, t1]) => {
        const [lo, hi] = visibleSlice(times, t0, t1);
        const inside = times.map((t, i) => [t, i] as const).filter(([t]) => t >= t0 && t <= t1);
        for (const [, i] of inside) expect(i >= lo && i < hi).toBe(true);
        // Only one sample before t0 and one after t1.
        expect(times.slice(lo, hi).filter((t) => t < t0).length).toBeLessThanOrEqual(1);
        expect(times.slice(lo, hi).filter((t) => t > t1).length).toBeLessThanOrEqual(1);
        if (lo > 0) expect(times[lo]!).toBeLessThan(t0);
        if (hi < times.length) expect(times[hi - 1]!).toBeGreaterThan(t1);
        expect(firstAtOrAfter(times, t0)).toBe(times.filter((t) => t < t0).length);
        expect(firstAfter(times, t1)).toBe(times.filter((t) => t <= t1).length);
      }),
    );
  });
});

describe('pixel columns', () => {
  it('hold the first, last, least and greatest of each column’s samples; the polyline visits them', () => {
    fc.assert(
      fc.property(series, windowOf, fc.integer({ min: 1, max: 400 }), ({ times, values }, [t0, t1], width) => {
        const [lo, hi] = visibleSlice(times, t0, t1);
        const cols = columnsOf(times, values, lo, hi, t0, t1, width);
        // Brute force: group every sample of the slice by its pixel column.
        const groups = new Map<number, number[]>();
        for (let i = lo; i < hi; i++) {
          const col = Math.floor((times[i]! - t0) * (width / (t1 - t0)));
          groups.set(col, [...(groups.get(col) ?? []), i]);
        }
        expect(cols.map((c) => c.col)).toEqual([...groups.keys()]);
        const pts = polyline(cols);
        expect(pts.length / 2).toBeLessThanOrEqual(4 * cols.length);
        for (let k = 2; k < pts.length; k += 2) expect(pts[k]!).toBeGreaterThanOrEqual(pts[k - 2]!);
        for (const c of cols) {
          const idx = groups.get(c.col)!;
          const vs = idx.map((i) => values[i]!);
          expect([c.first, c.last, c.min, c.max]).toEqual([vs[0], vs.at(-1), Math.min(...vs), Math.max(...vs)]);
          // The polyline's vertices in this column reach its least and greatest.
          const here: number[] = [];
          for (let k = 0; k < pts.length; k += 2) if (Math.floor(pts[k]!) === c.col) here.push(pts[k + 1]!);
          expect(Math.min(...here)).toBe(c.min);
          expect(Math.max(...here)).toBe(c.max);
        }
      }),
    );
  });

  it('keeps a single spike among thousands of samples in one column', () => {
    const times = Array.from({ length: 10_000 }, (_, i) => i);
    const values = times.map((t) => (t === 5_432 ? 99 : 1));
    const cols = columnsOf(times, values, 0, times.length, 0, 10_000, 10);
    expect(cols).toHaveLength(10);
    expect(cols[5]!.max).toBe(99);
    expect(polyline(cols).length / 2).toBeLessThanOrEqual(40);
  });

  it('gives the greatest value in a range of several columns', () => {
    expect(
      greatestIn(
        [
          [1, 5, 2],
          [3, 0, 9],
        ],
        0,
        2,
      ),
    ).toBe(5);
    expect(greatestIn([[1]], 0, 0)).toBe(-Infinity);
  });
});

describe('strip placement', () => {
  it('moves the strip within what was drawn at the same scale, and asks for a redraw otherwise', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e12 }),
        fc.integer({ min: 2000, max: 1e8 }),
        fc.integer({ min: 100, max: 4000 }),
        fc.double({ min: -3, max: 3, noNaN: true }),
        (min, span, plotW, shift) => {
          const drawn = around(min, min + span, plotW);
          const d = shift * span;
          const left = placement(drawn, min + d, min + d + span, plotW);
          if (Math.abs(shift) <= MARGIN * (1 - 1e-9)) {
            expect(left).not.toBeNull();
            // The window's start sits at the view's left edge.
            expect(left! + ((min + d - drawn.from) / span) * plotW).toBeCloseTo(0, 3);
          } else if (Math.abs(shift) > MARGIN * (1 + 1e-6)) expect(left).toBeNull();
          expect(placement(drawn, min, min + span * 1.01, plotW)).toBeNull();
          expect(rescaled(drawn, min, min + span * 1.01)).toBe(true);
          expect(rescaled(drawn, min + d, min + d + span)).toBe(false);
          expect(placement(drawn, min, min + span, plotW + 1)).toBeNull();
          // Only the window drawn (a zoom): any move asks for the margins.
          const only = around(min, min + span, plotW, true);
          expect(bare(only)).toBe(true);
          expect(bare(drawn)).toBe(false);
          expect(placement(only, min, min + span, plotW)).toBeCloseTo(0, 3);
          if (Math.abs(d) >= 1) expect(placement(only, min + d, min + d + span, plotW)).toBeNull();
        },
      ),
    );
  });
});
