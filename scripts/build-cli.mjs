// Bundles the CLI (electron/cli) into out/cli/warden.mjs so `npx warden` starts fast without a TS loader.
// Packages stay external: they are installed next to it by npm.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

await build({
  entryPoints: [`${root}electron/cli/index.ts`],
  outfile: `${root}out/cli/warden.mjs`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});
