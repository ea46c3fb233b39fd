// Which OCI runtimes actually run a container here. Installed is not enough: on hybrid cgroup
// hosts crun starts nothing while runc works, and libpod silently falls back to its default
// runtime when asked for one it does not know. So each is tried for real and the runtime
// used is read back from inspect. Results are cached per engine version in WARDEN_HOME.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { RuntimeCheck } from '../../../shared/types/engine.js';
import { RUNTIMES, type RuntimeName } from '../../../shared/types/sandbox.js';
import { WardenError } from '../../../shared/errors.js';
import type { PodmanConnection } from './connection.js';
import { LABEL } from './labels.js';
import type { RuntimeRouter } from './runtime-router.js';
import { sandboxRlimits } from './container-spec.js';
import { hostLimits } from './host-limits.js';
import { ociRuntimeArg, runscInstalled, runtimeFromInspect, RUNSC_INSTALL_HINT } from './oci-runtime.js';

/** Order of preference for the default: crun is faster to start; runc works on more hosts. */
const PREFERENCE: RuntimeName[] = ['crun', 'runc'];
const CACHE_FILE = 'runtimes.json';
const CACHE_TTL_MS = 24 * 3600 * 1000;

interface RuntimeCache {
  key: string;
  at: number;
  runtimes: RuntimeCheck[];
}

export function chooseDefaultRuntime(checks: RuntimeCheck[]): RuntimeName | null {
  return PREFERENCE.find((name) => checks.some((c) => c.name === name && c.works)) ?? null;
}

export const RUNTIME_INSTALL_HINTS: Record<RuntimeName, string> = {
  runc: 'install it with `apt-get install runc`',
  crun: 'install it with `apt-get install crun` (on hosts with hybrid cgroups use runc instead)',
  runsc: RUNSC_INSTALL_HINT,
  krun: 'krun needs crun built with libkrun (the crun-krun/krun package and libkrun) and a /dev/kvm that boots a guest kernel; Debian ships neither, so use runc, or runsc (gVisor) for a stronger wall',
};

async function tryRuntime(conn: PodmanConnection, router: RuntimeRouter, image: string, name: RuntimeName): Promise<RuntimeCheck> {
  // Without runsc the wrapper would still start a Podman service and fail only at start: say it plainly.
  if (name === 'runsc' && !runscInstalled()) return { name, installed: false, works: false, reason: 'runsc (gVisor) is not installed' };
  const probeName = `warden-probe-${name}-${randomBytes(3).toString('hex')}`;
  try {
    const creator = await router.connectionFor(name);
    await creator.libpod(
      'POST',
      '/containers/create',
      {
        name: probeName,
        image,
        command: ['true'],
        oci_runtime: ociRuntimeArg(name),
        netns: { nsmode: 'none' },
        labels: { [LABEL.managed]: 'probe' },
        r_limits: sandboxRlimits(hostLimits()),
      },
      `runtime probe ${name}`,
    );
    const inspect = await conn.libpod<{ OCIRuntime: string }>('GET', `/containers/${probeName}/json`, undefined, 'runtime probe');
    if (runtimeFromInspect(inspect.OCIRuntime) !== name) {
      return { name, installed: false, works: false, reason: `Podman does not know the ${name} runtime` };
    }
    try {
      await conn.libpod('POST', `/containers/${probeName}/start`, undefined, `runtime probe ${name}`, [204, 304]);
      const waited = await conn.libpod<number>('POST', `/containers/${probeName}/wait?condition=exited`, undefined, 'runtime probe');
      if (Number(waited) !== 0) return { name, installed: true, works: false, reason: `a test container exited with ${waited}` };
      return { name, installed: true, works: true };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return {
        name,
        installed: true,
        works: false,
        reason: message
          .replace(/^runtime probe \w+: /, '')
          .split('\n')[0]!
          .slice(0, 300),
      };
    }
  } catch (err) {
    if (err instanceof WardenError && err.code === 'E_ENGINE_UNREACHABLE') throw err;
    const message = err instanceof Error ? err.message : String(err);
    return { name, installed: false, works: false, reason: message.replace(/^runtime probe \w+: /, '').slice(0, 300) };
  } finally {
    await conn.libpod('DELETE', `/containers/${probeName}?force=true`, undefined, 'runtime probe', [200, 204, 404]).catch(() => undefined);
  }
}

/** A probe older than this was left by a process killed mid-probe: nobody will remove it but us. */
const STALE_PROBE_MS = 120_000;

async function sweepStaleProbes(conn: PodmanConnection): Promise<void> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`${LABEL.managed}=probe`] }));
  const probes = await conn
    .libpod<Array<{ Id: string; Created: number | string }>>(
      'GET',
      `/containers/json?all=true&filters=${filters}`,
      undefined,
      'runtime probe sweep',
    )
    .catch(() => []);
  const cutoff = Date.now() - STALE_PROBE_MS;
  for (const p of probes) {
    const created = typeof p.Created === 'number' ? p.Created * 1000 : Date.parse(p.Created);
    if (Number.isFinite(created) && created < cutoff) {
      await conn
        .libpod('DELETE', `/containers/${p.Id}?force=true`, undefined, 'runtime probe sweep', [200, 204, 404])
        .catch(() => undefined);
    }
  }
}

export async function probeRuntimes(conn: PodmanConnection, router: RuntimeRouter, image: string): Promise<RuntimeCheck[]> {
  await sweepStaleProbes(conn);
  const checks: RuntimeCheck[] = [];
  for (const name of RUNTIMES) checks.push(await tryRuntime(conn, router, image, name));
  return checks;
}

function cacheKey(conn: PodmanConnection, image: string): string {
  const info = conn.info();
  return [info.socketPath, info.version, info.cgroupVersion, image].join('|');
}

/** Fills conn.runtimes and conn.defaultRuntime, from the cache when it is fresh. */
export async function detectRuntimes(
  conn: PodmanConnection,
  router: RuntimeRouter,
  home: string,
  image: string,
  opts: { fresh?: boolean } = {},
): Promise<RuntimeCheck[]> {
  const file = join(home, CACHE_FILE);
  const key = cacheKey(conn, image);
  if (!opts.fresh) {
    try {
      const cache = JSON.parse(readFileSync(file, 'utf8')) as RuntimeCache;
      if (cache.key === key && Date.now() - cache.at < CACHE_TTL_MS && chooseDefaultRuntime(cache.runtimes)) {
        conn.runtimes = cache.runtimes;
        conn.defaultRuntime = chooseDefaultRuntime(cache.runtimes);
        return cache.runtimes;
      }
    } catch {
      // no cache yet
    }
  }
  const runtimes = await probeRuntimes(conn, router, image);
  conn.runtimes = runtimes;
  conn.defaultRuntime = chooseDefaultRuntime(runtimes);
  if (conn.defaultRuntime) {
    writeFileSync(file, JSON.stringify({ key, at: Date.now(), runtimes } satisfies RuntimeCache, null, 2), { mode: 0o600 });
  }
  return runtimes;
}
