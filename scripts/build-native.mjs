// Builds the egress proxy's fd-intake addon (resources/native/fd-intake.c) into
// out/native/fd-intake.node: a Node-API module, compiled with gcc against the headers of the Node
// that runs this script (Debian's nodejs ships them in /usr/include/node), so no node-gyp download
// is needed. Without it Warden still works: egress sandboxes' relays then carry bytes themselves
// (slower; electron/engine/egress/fd-intake.ts). So a missing compiler or header is a note, not a failure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = `${root}resources/native/fd-intake.c`;
const output = `${root}out/native/fd-intake.node`;

function nodeHeaders() {
  const dirs = [process.env.npm_config_nodedir, dirname(dirname(process.execPath))].filter(Boolean).map((d) => join(d, 'include', 'node'));
  return dirs.find((d) => existsSync(join(d, 'node_api.h'))) ?? null;
}

const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : 0);

export function buildIntake() {
  if (mtime(output) > Math.max(mtime(source), mtime(fileURLToPath(import.meta.url)))) return;
  const headers = nodeHeaders();
  if (!headers) {
    console.log('build-native: no Node headers (node_api.h) found; egress relays will carry bytes themselves (slower)');
    return;
  }
  mkdirSync(dirname(output), { recursive: true });
  const tmp = `${output}.tmp`;
  const gcc = process.env.CC || 'gcc';
  const r = spawnSync(
    gcc,
    [
      '-shared',
      '-fPIC',
      '-O2',
      '-std=gnu11',
      '-D_GNU_SOURCE',
      '-DNODE_GYP_MODULE_NAME=fd_intake',
      '-Wall',
      '-Wextra',
      '-Werror',
      `-I${headers}`,
      '-o',
      tmp,
      source,
    ],
    { stdio: 'inherit' },
  );
  if (r.status !== 0) {
    console.log('build-native: the fd-intake addon did not build (see above); egress relays will carry bytes themselves (slower)');
    return;
  }
  renameSync(tmp, output);
}
