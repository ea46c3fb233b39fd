// Bundles the CLI (electron/cli) into out/cli/warden.mjs so `npx warden` starts fast without a TS loader.
// Pure-JS packages are bundled in; native ones (better-sqlite3) stay external. dockerode's BuildKit
// session support pulls in gRPC (~150 ms at every start) for image builds Warden never does, so
// those modules are replaced by a stub that says so if ever reached.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

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

await build({
  entryPoints: [`${root}electron/cli/index.ts`],
  outfile: `${root}out/cli/warden.mjs`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'electron', 'cpu-features', 'ssh2'],
  plugins: [stubGrpc],
  // Bundled CommonJS packages call require() for Node built-ins; ESM has none, so one is made.
  banner: { js: "import { createRequire as __wardenCreateRequire } from 'node:module'; const require = __wardenCreateRequire(import.meta.url);" },
  sourcemap: 'linked',
  logLevel: 'warning',
});
