// What a resource graph draws for a window, in O(pixels) rather than O(points): the slice of the
// sorted samples that the window shows (binary searches), the samples' first, last, least and
// greatest value per pixel column (every spike stays drawn, however many samples share a column),
// the polyline through them, and the greatest value shown (the graph's y range).

/** The first index in 0..length for which `before` is false, where it is true up to some point and false after. */
export function partitionPoint(length: number, before: (i: number) => boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose time is ≥ t (times increasing). */
export function firstAtOrAfter(times: readonly number[], t: number): number {
  return partitionPoint(times.length, (i) => times[i]! < t);
}

/** First index whose time is > t (times increasing). */
export function firstAfter(times: readonly number[], t: number): number {
  return partitionPoint(times.length, (i) => times[i]! <= t);
}

/**
 * The index range [lo, hi) of the samples a window [t0, t1] draws: those inside it, and one either
 * side so the line runs to the window's edges.
 */
export function visibleSlice(times: readonly number[], t0: number, t1: number): [number, number] {
  const lo = Math.max(0, firstAtOrAfter(times, t0) - 1);
  const hi = Math.min(times.length, firstAfter(times, t1) + 1);
  return [lo, Math.max(lo, hi)];
}

/** One pixel column's samples: x of the first and last (px), their values, the least and greatest. */
export interface Column {
  col: number;
  x0: number;
  x1: number;
  first: number;
  last: number;
  min: number;
  max: number;
  /** Whether the least came before the greatest (the order the line visits them). */
  minFirst: boolean;
}

/**
 * The samples [lo, hi) of (times, values) mapped to x = (t − t0) / (t1 − t0) · width and grouped by
 * pixel column (floor of x), in time order.
 */
export function columnsOf(
  times: readonly number[],
  values: readonly number[],
  lo: number,
  hi: number,
  t0: number,
  t1: number,
  width: number,
): Column[] {
  const out: Column[] = [];
  const scale = width / Math.max(1e-9, t1 - t0);
  let c: Column | null = null;
  let minAt = 0;
  let maxAt = 0;
  for (let i = lo; i < hi; i++) {
    const x = (times[i]! - t0) * scale;
    const v = values[i]!;
    const col = Math.floor(x);
    if (!c || col !== c.col) {
      c = { col, x0: x, x1: x, first: v, last: v, min: v, max: v, minFirst: true };
      minAt = maxAt = i;
      out.push(c);
      continue;
    }
    c.x1 = x;
    c.last = v;
    if (v < c.min) {
      c.min = v;
      minAt = i;
    }
    if (v > c.max) {
      c.max = v;
      maxAt = i;
    }
    c.minFirst = minAt <= maxAt;
  }
  return out;
}

/**
 * The polyline through the columns as flat [x, value, x, value, …]: per column its first sample,
 * its least and greatest in the order they came, its last, all at the column's middle; repeated
 * vertices left out. At most four vertices a column.
 */
export function polyline(cols: readonly Column[]): number[] {
  const out: number[] = [];
  const push = (x: number, v: number) => {
    const n = out.length;
    if (n && out[n - 2] === x && out[n - 1] === v) return;
    out.push(x, v);
  };
  for (const c of cols) {
    // Every vertex of a column at its middle: within it the line is vertical (cheap to stroke, as
    // uPlot draws it), at most half a pixel from where the samples are.
    const x = c.col + 0.5;
    push(x, c.first);
    const [a, b] = c.minFirst ? [c.min, c.max] : [c.max, c.min];
    push(x, a);
    push(x, b);
    push(x, c.last);
  }
  return out;
}

/** The greatest of the values [lo, hi) of each array (−Infinity for none). */
export function greatestIn(arrays: ReadonlyArray<readonly number[]>, lo: number, hi: number): number {
  let max = -Infinity;
  for (const a of arrays) for (let i = lo; i < hi; i++) if (a[i]! > max) max = a[i]!;
  return max;
}
