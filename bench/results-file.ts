// Each benchmark owns one section of bench/RESULTS.md, between markers, so benches can run alone.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
const HEADER =
  '# Benchmark results\n\nWritten by `npm run bench` (each section by its own script). Machine noise is large here: read the ratios against the baseline measured in the same run, not the absolute times.\n';

export function writeResultsSection(name: string, markdown: string): void {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  let text = existsSync(RESULTS) ? readFileSync(RESULTS, 'utf8') : HEADER;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  text = from >= 0 && to > from ? text.slice(0, from) + block + text.slice(to + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(RESULTS, text);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summarize(samples: number[]): { p50: number; p95: number; mean: number; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), mean, n: sorted.length };
}

export function machineLine(): string {
  return `Run ${new Date().toISOString()} on node ${process.version}, ${process.platform}/${process.arch}.`;
}
