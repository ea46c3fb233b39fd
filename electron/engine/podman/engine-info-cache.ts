// Podman's /info takes 250–400 ms (it asks the runtimes and storage), too slow for every CLI
// command. What Warden needs of it cannot change while the same service runs, so it is cached in
// WARDEN_HOME per socket file: a restarted service makes a new socket, and so a new key.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConnectionInfo } from '../../../shared/types/engine.js';

const INFO_CACHE_FILE = 'engine-info.json';

/** What Warden keeps of libpod's /info. */
export interface EngineInfo {
  details: Pick<ConnectionInfo, 'version' | 'apiVersion' | 'rootless' | 'cgroupVersion'>;
  /** The runtime the service gives containers when none is forced. */
  serviceRuntime: string | null;
}

/** The part of libpod's /info answer that is read. */
export interface LibpodInfo {
  host: {
    cgroupVersion: string;
    security: { rootless: boolean };
    ociRuntime: { name: string };
  };
  version: { Version: string; APIVersion: string };
}

export function engineInfoOf(info: LibpodInfo): EngineInfo {
  return {
    details: {
      version: info.version.Version,
      apiVersion: info.version.APIVersion,
      rootless: info.host.security.rootless,
      cgroupVersion: info.host.cgroupVersion,
    },
    serviceRuntime: info.host.ociRuntime.name,
  };
}

interface EngineInfoCache extends EngineInfo {
  key: string;
}

/** Path, inode and change time of the socket file: different for every service that binds it. */
function socketIdentity(socketPath: string): string | null {
  try {
    const st = statSync(socketPath);
    return `${socketPath}|${st.ino}|${st.ctimeMs}`;
  } catch {
    return null;
  }
}

/** The cached info of the service on this socket, or `fetch`'s answer (then cached). */
export async function cachedEngineInfo(home: string, socketPath: string, fetch: () => Promise<EngineInfo>): Promise<EngineInfo> {
  const file = join(home, INFO_CACHE_FILE);
  const key = socketIdentity(socketPath);
  try {
    const cached = JSON.parse(readFileSync(file, 'utf8')) as EngineInfoCache;
    if (key && cached.key === key) return { details: cached.details, serviceRuntime: cached.serviceRuntime };
  } catch {
    // no cache yet
  }
  const info = await fetch();
  if (key) {
    try {
      writeFileSync(file, JSON.stringify({ key, details: info.details, serviceRuntime: info.serviceRuntime } satisfies EngineInfoCache), {
        mode: 0o600,
      });
    } catch {
      // a read-only home only costs speed
    }
  }
  return info;
}
