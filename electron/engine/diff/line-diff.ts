// Unified diffs of two texts, as `diff -u` and git print them, so a person (or `git apply`) reads
// them as usual. Common head and tail lines are cut first (most edits are small); the middle is an
// LCS table, bounded: a middle too large to compare line by line gets no text diff, only a summary.

/** Lines × lines of the middle past which no text diff is made. */
const MAX_CELLS = 4_000_000;
const CONTEXT = 3;

type Op = { kind: ' ' | '-' | '+'; line: string };

/** A last line without its newline ends in NUL (never in text: asText refuses it), so it differs from the same line with one. */
const NO_NEWLINE = '\0';

function splitLines(text: string): string[] {
  if (text === '') return [];
  if (text.endsWith('\n')) return text.slice(0, -1).split('\n');
  return `${text}${NO_NEWLINE}`.split('\n');
}

/** The edit script between a and b, or null when it would cost too much to find. */
function editScript(a: string[], b: string[]): Op[] | null {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const n = x.length;
  const m = y.length;
  if ((n + 1) * (m + 1) > MAX_CELLS) return null;
  // lcs[i][j]: the longest common subsequence of x[i..] and y[j..].
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
  const ops: Op[] = a.slice(0, head).map((line) => ({ kind: ' ', line }));
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      ops.push({ kind: ' ', line: x[i++]! });
      j++;
      // Removals before additions, as diff -u prints a changed line.
    } else if (i < n && (j === m || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) ops.push({ kind: '-', line: x[i++]! });
    else ops.push({ kind: '+', line: y[j++]! });
  }
  for (const line of a.slice(a.length - tail)) ops.push({ kind: ' ', line });
  return ops;
}

export interface TextDiff {
  /** The hunks, without the ---/+++ header; '' when the texts are equal. */
  hunks: string;
  added: number;
  removed: number;
}

/** The unified hunks from `before` to `after`, or null when the texts are too long to compare here. */
export function unifiedHunks(before: string, after: string): TextDiff | null {
  const ops = editScript(splitLines(before), splitLines(after));
  if (!ops) return null;
  let out = '';
  let added = 0;
  let removed = 0;
  const changed = ops.flatMap((op, k) => (op.kind === ' ' ? [] : [k]));
  let k = 0;
  while (k < changed.length) {
    // One hunk: changes closer than 2×CONTEXT unchanged lines apart go together.
    let last = k;
    while (last + 1 < changed.length && changed[last + 1]! - changed[last]! <= 2 * CONTEXT) last++;
    const start = Math.max(0, changed[k]! - CONTEXT);
    const end = Math.min(ops.length, changed[last]! + CONTEXT + 1);
    let ai = 0;
    let bi = 0;
    for (let p = 0; p < start; p++) {
      if (ops[p]!.kind !== '+') ai++;
      if (ops[p]!.kind !== '-') bi++;
    }
    let body = '';
    let aLen = 0;
    let bLen = 0;
    for (let p = start; p < end; p++) {
      const op = ops[p]!;
      body += op.line.endsWith(NO_NEWLINE) ? `${op.kind}${op.line.slice(0, -1)}\n\\ No newline at end of file\n` : `${op.kind}${op.line}\n`;
      if (op.kind !== '+') aLen++;
      if (op.kind !== '-') bLen++;
      if (op.kind === '+') added++;
      if (op.kind === '-') removed++;
    }
    const range = (from: number, len: number) => `${len === 0 ? from : from + 1}${len === 1 ? '' : `,${len}`}`;
    out += `@@ -${range(ai, aLen)} +${range(bi, bLen)} @@\n${body}`;
    k = last + 1;
  }
  return { hunks: out, added, removed };
}

/** Text a person can read in a diff: valid UTF-8 without NUL bytes. */
export function asText(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
