#!/usr/bin/env node
// `npm start`: the desktop app where Electron's binary is installed; otherwise the web shell
// (`warden serve`), which prints the control panel's address with a one-time login link.
//   npm start              whichever fits this machine
//   npm start -- --web     the web shell even where Electron exists
//   npm start -- --no-build  skip the set-up and the builds (they ran already: a restart, a spec)
// package.json runs it with `exec`, so npm's signals reach this script itself: Debian's sh (dash)
// does not exec a lone command, and a SIGTERM to npm alone killed that sh and left this script and
// serve running, the warm pool with them.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const forceWeb = process.argv.includes('--web');
const noBuild = process.argv.includes('--no-build');

function run(cmd, args, what) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    process.stderr.write(`npm start: ${what} failed\n`);
    process.exit(r.status ?? 1);
  }
}

function electronBinary() {
  try {
    const pkg = createRequire(join(root, 'package.json')).resolve('electron/package.json');
    const pathFile = join(dirname(pkg), 'path.txt');
    if (!existsSync(pathFile)) return null;
    const bin = join(dirname(pkg), 'dist', readFileSync(pathFile, 'utf8').trim());
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

if (!noBuild) {
  // Podman, the sandbox image and friends (quick when all is there).
  run('bash', [join(root, 'scripts/setup.sh'), '--no-browser'], 'machine set-up');
  // Node modules, when missing or built for another Node (better-sqlite3 is native).
  const modulesOk =
    spawnSync(process.execPath, ['-e', "require('better-sqlite3')(':memory:')"], { cwd: root, stdio: 'ignore' }).status === 0;
  if (!modulesOk) run('npm', ['ci', '--no-audit', '--no-fund'], 'installing node modules (npm ci)');
  // The CLI and the renderer, from the current sources.
  run(process.execPath, [join(root, 'scripts/build-cli.mjs')], 'building the CLI');
  run(process.execPath, [join(root, 'node_modules/electron-vite/bin/electron-vite.js'), 'build', '--logLevel', 'warn'], 'building the app');
}

/**
 * A signal to this script (npm forwards SIGINT and SIGTERM to it) goes on to the app or serve, and
 * this script waits for it to exit: serve removes its warm pool first. A signal sent to the whole
 * group (Ctrl-C, `timeout`) reaches serve twice, directly and from here; serve takes the second as
 * "still stopping", not as a second kill.
 */
function forwardStopSignals(child) {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
}

const electron = forceWeb ? null : electronBinary();
if (electron) {
  // better-sqlite3 must match Electron's ABI inside the app; `npm test` runs under Node, so the
  // Node build is put back when the app exits.
  const rebuild = (args) => spawnSync('npx', ['--no-install', ...args], { cwd: root, stdio: 'inherit' }).status === 0;
  const rebuilt = rebuild(['electron-rebuild', '-f', '-o', 'better-sqlite3']) || rebuild(['electron-builder', 'install-app-deps']);
  if (!rebuilt)
    process.stderr.write('npm start: could not rebuild better-sqlite3 for Electron (install @electron/rebuild); the ledger may not open\n');
  const child = spawn(electron, [join(root, 'out/main/index.js')], { cwd: root, stdio: 'inherit' });
  forwardStopSignals(child);
  child.on('exit', (code) => {
    if (rebuilt) spawnSync('npm', ['rebuild', 'better-sqlite3'], { cwd: root, stdio: 'inherit' });
    process.exit(code ?? 0);
  });
} else {
  if (!forceWeb) process.stderr.write('npm start: no Electron binary here: starting the web shell instead\n');
  const child = spawn(process.execPath, [join(root, 'bin/warden.mjs'), 'serve'], { cwd: root, stdio: 'inherit' });
  forwardStopSignals(child);
  child.on('exit', (code) => process.exit(code ?? 0));
}
