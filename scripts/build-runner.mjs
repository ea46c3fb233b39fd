// Builds Warden's in-sandbox runner (resources/runner/*.c) into out/runner/warden-runner: one static
// binary (gcc -static, C library only), so it runs in any image the user names. Run by `prepare`,
// `build` and `build:cli`, so a fresh clone has it. Skipped only when rebuilt sources are older
// than the binary; WARDEN_RUNNER=off skips it on purpose (sandboxes then use plain engine execs).
// Then the egress proxy's hand-over addon (scripts/build-native.mjs), which the same compiler builds.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const srcDir = `${root}resources/runner`;
const outDir = `${root}out/runner`;
const output = `${outDir}/warden-runner`;

import { buildIntake } from './build-native.mjs';

if (process.env.WARDEN_RUNNER === 'off') {
  console.log('build-runner: WARDEN_RUNNER=off, not building the sandbox runner');
  process.exit(0);
}
buildIntake();

const sources = readdirSync(srcDir).filter((f) => f.endsWith('.c') || f.endsWith('.h'));
const newest = Math.max(...sources.map((f) => statSync(`${srcDir}/${f}`).mtimeMs), statSync(fileURLToPath(import.meta.url)).mtimeMs);
let built = 0;
try {
  built = statSync(output).mtimeMs;
} catch {
  // not built yet
}
if (built > newest) process.exit(0);

const gcc = process.env.CC || 'gcc';
if (spawnSync(gcc, ['--version'], { stdio: 'ignore' }).error) {
  console.error(
    `build-runner: ${gcc} was not found; the sandbox runner (resources/runner) needs a C compiler with a static C library.\n` +
      '  Install it with `apt-get install gcc libc6-dev`, or build without the runner: WARDEN_RUNNER=off (every call then takes a plain engine exec).',
  );
  process.exit(1);
}
mkdirSync(outDir, { recursive: true });
const tmp = `${output}.tmp`;
const cFiles = sources.filter((f) => f.endsWith('.c')).map((f) => `${srcDir}/${f}`);
const result = spawnSync(
  gcc,
  ['-static', '-O2', '-std=gnu11', '-D_GNU_SOURCE', '-Wall', '-Wextra', '-Werror', '-s', '-o', tmp, ...cFiles],
  {
    stdio: 'inherit',
  },
);
if (result.status !== 0) {
  console.error('build-runner: compiling the sandbox runner failed (see above); a static C library (libc6-dev) is needed.');
  process.exit(1);
}
renameSync(tmp, output);
