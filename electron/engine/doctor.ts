// `warden doctor`: can sandboxes run here, and if not, exactly what to install or start.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync } from 'node:fs';
import type { DoctorCheck, DoctorReport } from '../../shared/types/engine.js';
import type { ErrorInfo } from '../../shared/errors.js';
import type { PodmanEngine } from './podman/podman-engine.js';
import { defaultImage } from './podman/podman-engine.js';
import { secretsCheck } from './secrets-check.js';
import { canHandOver, descriptorsRefusable, loadAddon } from './egress/hand-over.js';
import { RUNTIME_INSTALL_HINTS } from './podman/runtimes.js';
import { tcpMemoryHostCheck } from './podman/tcp-memory.js';

export interface DoctorInput {
  home: string;
  env: NodeJS.ProcessEnv;
  engine: PodmanEngine | null;
  /** Why the engine could not be opened, when it could not. */
  openError?: ErrorInfo;
  fresh: boolean;
}

function dataDirCheck(home: string): DoctorCheck {
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    accessSync(home, constants.W_OK);
    return { name: 'data directory', ok: true, detail: home };
  } catch (err) {
    return {
      name: 'data directory',
      ok: false,
      detail: `${home}: ${(err as Error).message}`,
      fix: 'set WARDEN_HOME to a writable directory',
    };
  }
}

function podmanCheck(): DoctorCheck {
  const run = spawnSync('podman', ['--version'], { encoding: 'utf8' });
  if (run.status === 0) return { name: 'podman', ok: true, detail: run.stdout.trim() };
  return {
    name: 'podman',
    ok: false,
    detail: 'the podman command is not installed',
    fix: 'apt-get install podman runc catatonit uidmap (or run `npm run setup`)',
  };
}

/** Rootful sandboxes get a user namespace of their own, cut from the "containers" subordinate ranges. */
export function userNamespaceCheck(rootless: boolean, read = (f: string) => readFileSync(f, 'utf8')): DoctorCheck {
  const name = 'user namespaces';
  if (rootless) return { name, ok: true, detail: "rootless Podman: a sandbox's root is already your own user" };
  const missing = ['/etc/subuid', '/etc/subgid'].filter((f) => {
    try {
      return !/^containers:\d+:\d+$/m.test(read(f));
    } catch {
      return true;
    }
  });
  if (!missing.length)
    return { name, ok: true, detail: 'each sandbox\'s root is an unprivileged host uid (ranges of the "containers" entry)' };
  return {
    name,
    ok: false,
    detail: `no "containers" range in ${missing.join(' and ')}: sandboxes cannot get a user namespace of their own, and creating one fails`,
    fix: 'echo containers:2147483647:2147483648 | tee -a /etc/subuid /etc/subgid   (or run `npm run setup`)',
  };
}

export async function runDoctor(input: DoctorInput): Promise<DoctorReport> {
  const image = input.engine?.sandboxes.defaultImage ?? defaultImage(input.env);
  const checks: DoctorCheck[] = [dataDirCheck(input.home), secretsCheck(input.home), podmanCheck()];
  const engine = input.engine;
  if (!engine) {
    checks.push({
      name: 'engine',
      ok: false,
      detail: input.openError?.message ?? 'no Podman API socket answers',
      fix: input.openError?.hint ?? 'start one with `podman system service --time=0 &`',
    });
    return { ok: false, dataDir: input.home, connection: null, image: { name: image, present: false }, checks };
  }

  const info = engine.info();
  checks.push({
    name: 'engine',
    ok: info.status === 'connected',
    detail: `Podman ${info.version} at ${info.socketPath} (${info.source}), ${info.rootless ? 'rootless' : 'rootful'}, cgroups ${info.cgroupVersion}`,
  });
  checks.push(userNamespaceCheck(info.rootless ?? false));

  const present = await engine.sandboxes.imageExists(image);
  checks.push(
    present
      ? { name: 'image', ok: true, detail: `${image} is present` }
      : {
          name: 'image',
          ok: false,
          detail: `${image} is missing`,
          fix: 'build it offline with `npm run setup` (resources/image/build.sh)',
        },
  );

  if (present) await engine.detectRuntimes(input.fresh);
  const after = engine.info();
  for (const r of after.runtimes) {
    checks.push({
      name: `runtime ${r.name}`,
      // A runtime that is not there is information, not a failure; one default is what matters.
      ok: true,
      detail: r.works ? 'works' : r.installed ? `installed, does not work here: ${r.reason ?? ''}` : `not available: ${r.reason ?? ''}`,
      ...(r.works || r.installed ? {} : { fix: RUNTIME_INSTALL_HINTS[r.name] }),
    });
  }
  const disk = await engine.diskSupport();
  checks.push({
    name: 'disk limit',
    // Sandboxes still run without it; their info then says the limit is not enforced.
    ok: true,
    detail: disk
      ? `not enforced here: ${disk}`
      : "enforced: each sandbox's writable layer lives on a loop-mounted ext4 file of its disk size",
  });
  const tcp = tcpMemoryHostCheck();
  checks.push({
    name: 'sandbox TCP memory',
    ok: tcp.ok,
    // Warden's side of an egress sandbox's connections counts in it only where its dialer can run (sandbox-dialer.ts).
    detail: `${tcp.detail}; ${tcp.ok && loadAddon() ? "egress connections are made in the sandbox's memory cgroup" : "egress connections are made by Warden's process, outside it"}`,
  });
  checks.push({
    name: 'egress descriptors',
    // Not fatal (egress works), but a runc egress sandbox can then freeze this process: said plainly.
    ok: descriptorsRefusable(),
    detail: descriptorsRefusable()
      ? 'refused on egress sockets (SO_PASSRIGHTS): no descriptor from a sandbox reaches Warden'
      : 'cannot be refused here (a kernel before 6.16, or the hand-over addon is not built): a program in a runc egress sandbox could block Warden by sending one (README, Egress control); prefer gVisor for egress sandboxes',
  });
  checks.push({
    name: 'egress carrier',
    // Egress works either way; this only says how its bytes go.
    ok: true,
    detail: canHandOver()
      ? "under runc, a large transfer's connection is handed from the relay to the pump; under gVisor the relay carries its bytes over its Unix socket"
      : 'each egress relay carries its bytes over its Unix socket (the hand-over addon is not built or WARDEN_EGRESS_HAND_OVER=off)',
  });
  checks.push(
    after.defaultRuntime
      ? { name: 'default runtime', ok: true, detail: `${after.defaultRuntime} (sandboxes run with it unless --runtime says otherwise)` }
      : {
          name: 'default runtime',
          ok: false,
          detail: present ? 'no OCI runtime could run a test container' : 'not checked: the image is missing',
          fix: present
            ? 'install runc (`apt-get install runc`); see the runtime lines above for why each failed'
            : 'build the image first (`npm run setup`)',
        },
  );
  return { ok: checks.every((c) => c.ok), dataDir: input.home, connection: after, image: { name: image, present }, checks };
}
