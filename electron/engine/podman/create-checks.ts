// Checks a create makes before it asks Podman for anything: the spec's labels and workspace, and a
// runtime that works on this host (with what to install or use instead when it does not).
import { existsSync, statSync } from 'node:fs';
import { WardenError } from '../../../shared/errors.js';
import type { RuntimeName, SandboxSpec } from '../../../shared/types/sandbox.js';
import type { PodmanConnection } from './connection.js';
import { POOL_NAME_PREFIX } from './container-names.js';
import { reservedLabelKeys } from './labels.js';
import { RUNTIME_INSTALL_HINTS } from './runtimes.js';

/** The runtime a create asks for, if it works here; else the host's default. */
export function chooseRuntime(conn: PodmanConnection, requested: RuntimeName | undefined): RuntimeName {
  if (requested) {
    const check = conn.runtimes.find((r) => r.name === requested);
    if (check && !check.works) {
      throw new WardenError(
        'E_RUNTIME_UNAVAILABLE',
        `the ${requested} runtime is ${check.installed ? 'installed but does not run containers here' : 'not available'}${check.reason ? ` (${check.reason})` : ''}`,
        check.installed
          ? `use ${conn.defaultRuntime ?? 'runc'} instead; \`warden doctor\` lists what works`
          : RUNTIME_INSTALL_HINTS[requested],
      );
    }
    return requested;
  }
  if (!conn.defaultRuntime) {
    throw new WardenError(
      'E_RUNTIME_UNAVAILABLE',
      'no OCI runtime runs containers on this host',
      'install runc (`apt-get install runc`) and run `warden doctor`',
    );
  }
  return conn.defaultRuntime;
}

/**
 * What a spec asks that Warden refuses before Podman sees it: reserved labels, a pool name (unless
 * the pool makes it), a workspace that is not a directory.
 */
export function validateSpec(spec: SandboxSpec, forPool = false, withRunner = true): void {
  if (spec.network === 'egress' && !withRunner)
    throw new WardenError(
      'E_BAD_INPUT',
      "network egress needs Warden's in-sandbox runner, which this install does not have",
      'build it with `node scripts/build-runner.mjs` (needs gcc and a static C library), or use --network none',
    );
  if (!forPool && spec.name?.startsWith(POOL_NAME_PREFIX)) {
    throw new WardenError('E_BAD_INPUT', `names starting with ${POOL_NAME_PREFIX} are the warm pool's`, 'pick another name');
  }
  const reserved = reservedLabelKeys(spec.labels);
  if (reserved.length) {
    throw new WardenError(
      'E_BAD_INPUT',
      `labels ${reserved.join(', ')} use the reserved warden. prefix`,
      'pick label names that do not start with "warden."',
    );
  }
  if (spec.workspace !== undefined) {
    if (!existsSync(spec.workspace) || !statSync(spec.workspace).isDirectory()) {
      throw new WardenError(
        'E_BAD_INPUT',
        `workspace ${spec.workspace} is not a directory on this host`,
        'create it first, or leave --workspace out',
      );
    }
  }
}
