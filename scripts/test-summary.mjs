// Prints one closing line over every suite's JSON report: "tests: N passed, N failed, N skipped".
//   node scripts/test-summary.mjs <dir> [stage …]   each named stage must have left <dir>/<stage>.json
// Exits non-zero when a test failed, nothing passed, or a named stage left no report (it crashed or
// never reached its reporter, which must not read as success).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, ...stages] = process.argv.slice(2);
const missing = stages.filter((stage) => !existsSync(join(dir, `${stage}.json`)));
for (const stage of missing) console.error(`test-summary: no report from the ${stage} stage (${join(dir, `${stage}.json`)})`);
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  const report = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  if (typeof report.numPassedTests === 'number') {
    // vitest (jest-compatible JSON)
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  } else if (report.stats) {
    // playwright
    passed += report.stats.expected ?? 0;
    failed += (report.stats.unexpected ?? 0) + (report.stats.flaky ?? 0);
    skipped += report.stats.skipped ?? 0;
  }
}
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 || missing.length > 0 ? 1 : 0);
