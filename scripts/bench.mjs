// `npm run bench [name…]`: runs bench/<name>.bench.ts (all of them by default); each writes its section of bench/RESULTS.md.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benchDir = fileURLToPath(new URL('../bench/', import.meta.url));
const wanted = process.argv.slice(2);
const all = readdirSync(benchDir)
  .filter((f) => f.endsWith('.bench.ts'))
  .sort();
const chosen = wanted.length ? all.filter((f) => wanted.includes(f.replace('.bench.ts', ''))) : all;
if (chosen.length === 0) {
  console.error(`bench: nothing to run (have: ${all.map((f) => f.replace('.bench.ts', '')).join(', ')})`);
  process.exit(2);
}
let failed = 0;
for (const file of chosen) {
  console.log(`\n== bench ${file} ==`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', `${benchDir}${file}`], { stdio: 'inherit' });
  if (run.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
