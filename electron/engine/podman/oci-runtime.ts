// What Podman is told to run for each runtime name, and the way back from inspect's OCIRuntime to
// a name. runsc is not registered in containers.conf (that broke Podman processes lacking the
// config): Podman gets the absolute path of resources/runtimes/runsc-warden, and inspect then
// reports that path. So gVisor is recognised by the exact path, never by a name: a sandbox that
// says runsc really ran through Warden's wrapper.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WardenError } from '../../../shared/errors.js';
import type { RuntimeName } from '../../../shared/types/sandbox.js';

const RUNSC_WRAPPER = join('resources', 'runtimes', 'runsc-warden');
export const RUNSC_INSTALL_HINT =
  "install gVisor with `npm run setup` (it runs `apt-get install -t bookworm-backports runsc` after adding bookworm-backports to apt's sources)";

/** Where Debian (and a manual install) put runsc; the wrapper looks in the same places. */
const RUNSC_BINARIES = ['/usr/bin/runsc', '/usr/sbin/runsc', '/usr/local/bin/runsc'];

export function runscInstalled(): boolean {
  return RUNSC_BINARIES.some((p) => existsSync(p));
}

let wrapperCache: string | null | undefined;

/** resources/runtimes/runsc-warden, found from this module in the source tree or the bundled CLI. */
export function runscWrapperPath(): string | null {
  if (wrapperCache !== undefined) return wrapperCache;
  let dir = dirname(fileURLToPath(import.meta.url));
  wrapperCache = null;
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, RUNSC_WRAPPER);
    if (existsSync(candidate)) {
      wrapperCache = candidate;
      break;
    }
    dir = dirname(dir);
  }
  return wrapperCache;
}

/** The value for Podman's `--runtime` (and libpod's oci_runtime). */
export function ociRuntimeArg(name: RuntimeName): string {
  if (name !== 'runsc') return name;
  const wrapper = runscWrapperPath();
  if (!wrapper)
    throw new WardenError(
      'E_RUNTIME_UNAVAILABLE',
      `the gVisor wrapper (${RUNSC_WRAPPER}) is missing from this install`,
      'reinstall Warden; the wrapper ships in resources/',
    );
  return wrapper;
}

/**
 * The runtime name for inspect's OCIRuntime: the wrapper's exact path is runsc; anything else is
 * reported as Podman said it (a path no one recognises stays a path, never a guessed name).
 */
export function runtimeFromInspect(ociRuntime: string): string {
  if (!ociRuntime) return ociRuntime;
  const wrapper = runscWrapperPath();
  if (wrapper && ociRuntime === wrapper) return 'runsc';
  return ociRuntime;
}

/**
 * The host pids limit for a sandbox whose guest may hold `pids` processes. Under gVisor's systrap
 * platform each guest process costs about two host processes (a stub and its tracer thread) on
 * top of ~32 for the sandbox itself (measured: 32 idle, 347 with 150 guest processes), and the
 * guest's own pids cgroup reads `max`: so the host limit is scaled and the guest keeps the
 * number the user asked for (the warden.pids label). Other runtimes count processes one to one.
 */
export function hostPidsLimit(runtime: RuntimeName, pids: number): number {
  return runtime === 'runsc' ? 2 * pids + 64 : pids;
}
