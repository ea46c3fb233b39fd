#!/usr/bin/env node
// Entry of the `warden` command: the bundled CLI, built by `npm ci` (prepare) or `npm run build:cli`.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = fileURLToPath(new URL('../out/cli/warden.mjs', import.meta.url));
if (!existsSync(built)) {
  process.stderr.write('warden: the CLI is not built yet. Run `npm run build:cli` (or `npm ci`) in the Warden folder.\n');
  process.exit(1);
}
await import(pathToFileURL(built).href);
