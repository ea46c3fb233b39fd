// The runner binary every new sandbox gets (bind-mounted read-only at /.warden/runner). Built from
// resources/runner/ into out/runner/ by the build step; copied into WARDEN_HOME under a name that
// carries its digest, as the seccomp profile is (podman/wall.ts): Podman needs a plain host file it
// can mount (not one inside an asar), and a rebuilt runner never replaces a file a sandbox has mounted.
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function builtRunnerPath(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'out', 'runner', 'warden-runner');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return null;
}

/** The host path to mount, or null when no runner was built (sandboxes then use the plain exec path). */
export function installRunner(home: string): string | null {
  const source = process.env.WARDEN_RUNNER === 'off' ? null : builtRunnerPath();
  if (!source) return null;
  const bytes = readFileSync(source);
  const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const target = join(home, 'runner', `warden-runner-${digest}`);
  if (!existsSync(target)) {
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes, { mode: 0o755 });
    chmodSync(tmp, 0o755);
    renameSync(tmp, target);
  }
  return target;
}
