// The wall between a sandbox and the host, beyond dropped capabilities: a user namespace per
// sandbox and Warden's seccomp profile. Without them a rootful sandbox's root is the host's root;
// one unshare(CLONE_NEWUSER) gives it a full capability set in a new namespace, from which it can
// mount the cgroup hierarchies and raise its own memory, pids and CPU limits. Either layer alone
// stops that reproduction; both are kept because each also covers what the other does not
// (seccomp: kernel attack surface such as keyctl, bpf, io_uring; the user namespace: any file or
// cgroup owned by host root, whatever syscall reaches it).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WardenError } from '../../../shared/errors.js';

/** resources/seccomp/warden.json (made by scripts/seccomp-profile.mjs), found from this module in the source tree or a bundle. */
function shippedProfilePath(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'resources', 'seccomp', 'warden.json');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return null;
}

/**
 * Copies the profile into WARDEN_HOME under a name that carries its digest and returns that path.
 * Podman reads the profile from a host path when the sandbox is created (and keeps it in the
 * container's config), so the copy must be a plain file Podman can open, which a file inside the
 * app's asar is not. Content-addressed, so a changed profile never rewrites a path in use.
 */
export function installSeccompProfile(home: string): string {
  const source = shippedProfilePath();
  if (!source)
    throw new WardenError(
      'E_INTERNAL',
      'the seccomp profile (resources/seccomp/warden.json) is missing from this install',
      'reinstall Warden',
    );
  const text = readFileSync(source);
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const target = join(home, 'seccomp', `warden-${digest}.json`);
  if (!existsSync(target)) {
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, text, { mode: 0o644 });
  }
  return target;
}

/**
 * The libpod SpecGenerator fields for `--userns=auto`. The API needs both: Podman 4.3 ignores
 * `userns: auto` alone (its CLI fills `idmappings` on the client side), and the container would
 * silently share the host's ids. Only one plain range: Podman 4.3's idmapped image layers fail to
 * mount for a mapping with extra ranges (`uidmapping=0:1000:1`), so the workspace owner cannot be
 * mapped in; the workspace is lent to the sandbox instead (workspace-lease.ts).
 */
export const USER_NAMESPACE = {
  userns: { nsmode: 'auto' },
  idmappings: { HostUIDMapping: false, HostGIDMapping: false, AutoUserNs: true, AutoUserNsOpts: { Size: 65536 } },
} as const;
