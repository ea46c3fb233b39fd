// Bundles the CLI (electron/cli) into out/cli/ so `npx warden` starts fast without a TS loader.
// Split into chunks (ESM code splitting): the entry, out/cli/warden.mjs, holds commander and the
// command definitions; each action's `await import()` (engine, server, ledger, MCP, zod) becomes a
// chunk loaded only when that action runs, so `warden --help` does not parse 5 MB of JavaScript.
// Pure-JS packages are bundled in; native ones (better-sqlite3) stay external. dockerode's BuildKit
// session support pulls in gRPC (~150 ms at every start) for image builds Warden never does, so
// those modules are replaced by a stub that says so if ever reached.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}out/cli`;

const stubGrpc = {
  name: 'stub-grpc',
  setup(b) {
    b.onResolve({ filter: /^@grpc\/(grpc-js|proto-loader)$/ }, (args) => ({ path: args.path, namespace: 'stub-grpc' }));
    b.onLoad({ filter: /.*/, namespace: 'stub-grpc' }, () => ({
      contents: 'module.exports = new Proxy({}, { get() { throw new Error("gRPC (BuildKit sessions) is not part of the Warden CLI"); } });',
      loader: 'js',
    }));
  },
};

// zod re-exports all its ~50 message locales as `z.locales`; Warden speaks English only (zod's
// default, which its schemas import directly) and never names another. Leaving them out takes
// ~350 KB from the chunk every validating command parses.
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer) ? { path: args.path, namespace: 'zod-locales' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
      contents: `export { default as en } from ${JSON.stringify(`${root}node_modules/zod/v4/locales/en.js`)};`,
      loader: 'js',
      resolveDir: root,
    }));
  },
};

const result = await build({
  entryPoints: { warden: `${root}electron/cli/index.ts` },
  outdir,
  outExtension: { '.js': '.mjs' },
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'electron', 'cpu-features', 'ssh2'],
  plugins: [stubGrpc, englishOnlyZod],
  // Bundled CommonJS packages call require() for Node built-ins; ESM has none, so one is made (in every chunk).
  banner: {
    js: "import { createRequire as __wardenCreateRequire } from 'node:module'; const require = __wardenCreateRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  logLevel: 'warning',
  metafile: true,
});

// Chunks are named by content hash: those of earlier builds would pile up, so what this build did not write goes.
const written = new Set(Object.keys(result.metafile.outputs).map((f) => f.split('/').pop()));
for (const file of readdirSync(outdir)) if (!written.has(file)) rmSync(`${outdir}/${file}`, { force: true });
