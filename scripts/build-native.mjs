// Builds the egress proxy's hand-over addon (resources/native/hand-over.c) into
// out/native/hand-over.node: a Node-API module, compiled with gcc against the headers of the Node
// that runs this script (Debian's nodejs ships them in /usr/include/node), so no node-gyp download
// is needed. Without it Warden still works: egress sandboxes' relays then carry bytes themselves
// (slower; electron/engine/egress/hand-over.ts). So a missing compiler or header is a note, not a failure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = `${root}resources/native/hand-over.c`;
const output = `${root}out/native/hand-over.node`;
/** Shared with the runner (resources/runner/fdpass.h): a change there rebuilds the addon too. */
const shared = `${root}resources/runner/fdpass.h`;

function nodeHeaders() {
  const dirs = [process.env.npm_config_nodedir, dirname(dirname(process.execPath))].filter(Boolean).map((d) => join(d, 'include', 'node'));
  return dirs.find((d) => existsSync(join(d, 'node_api.h'))) ?? null;
}

const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : 0);

export function buildIntake() {
  if (mtime(output) > Math.max(mtime(source), mtime(shared), mtime(fileURLToPath(import.meta.url)))) return;
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
      '-DNODE_GYP_MODULE_NAME=hand_over',
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
    console.log('build-native: the hand-over addon did not build (see above); egress relays will carry bytes themselves (slower)');
    return;
  }
  renameSync(tmp, output);
}
