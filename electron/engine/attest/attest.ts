// Runs an attestation: one exec of the probe inside the sandbox, the host's own view of its cgroup
// (when the engine runs on this host), and the verdict. The host's view is read from the sandbox's
// init process (inspect State.Pid → /proc/PID/cgroup), only when that cgroup names the container:
// a pid from a remote engine means nothing here.
import { readFileSync } from 'node:fs';
import { WardenError } from '../../../shared/errors.js';
import type { Attestation } from '../../../shared/types/attestation.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { PodmanConnection } from '../podman/connection.js';
import { collectExec } from '../podman/exec-session.js';
import { deepChecks, deepTries } from './deep.js';
import { buildProbe, parseSections } from './probe.js';
import { plainChecks, type AttestExpectations } from './verdict.js';

const PLAIN_TIMEOUT_MS = 30_000;
const DEEP_TIMEOUT_MS = 180_000;
/** Engine sockets an agent must never reach, wherever the engine keeps them. */
const ENGINE_SOCKETS = [
  '/run/podman/podman.sock',
  '/var/run/podman/podman.sock',
  '/var/run/docker.sock',
  '/run/docker.sock',
  '/run/user/0/podman/podman.sock',
];

export interface AttestOptions {
  deep: boolean;
  actor: string;
  /** WARDEN_HOME on the host: nothing of it may be reachable inside. */
  home: string;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** The sandbox's limits as the host's cgroup files say, or null when they are not readable here. */
export function hostCgroupView(pid: number, containerId: string): AttestExpectations['host'] {
  const cgroup = pid > 0 ? readOrNull(`/proc/${pid}/cgroup`) : null;
  if (!cgroup || !cgroup.includes(containerId)) return null;
  const lines = cgroup.split('\n').map((l) => l.split(':'));
  const v1 = (ctl: string) => lines.find((l) => l[1]?.split(',').includes(ctl))?.[2];
  const v2 = lines.find((l) => l[0] === '0' && l[1] === '')?.[2];
  const read = (ctl: string, v1File: string, v2File: string) => {
    const path = v1(ctl);
    if (path !== undefined) return readOrNull(`/sys/fs/cgroup/${ctl}${path}/${v1File}`);
    return v2 !== undefined ? readOrNull(`/sys/fs/cgroup${v2}/${v2File}`) : null;
  };
  return {
    procVersion: readOrNull('/proc/version'),
    memory: read('memory', 'memory.limit_in_bytes', 'memory.max'),
    pids: read('pids', 'pids.max', 'pids.max'),
  };
}

export async function attest(conn: PodmanConnection, sandbox: SandboxInfo, o: AttestOptions): Promise<Attestation> {
  if (sandbox.state !== 'running') {
    throw new WardenError(
      'E_BAD_INPUT',
      `sandbox ${sandbox.name} is ${sandbox.state}: only a running sandbox can be attested`,
      `start it first: warden sandbox start ${sandbox.name}`,
    );
  }
  const started = Date.now();
  const raw = await conn.libpod<{ State: { Pid: number } }>('GET', `/containers/${sandbox.id}/json`, undefined, `sandbox ${sandbox.name}`);
  const expect: AttestExpectations = {
    runtime: sandbox.runtime,
    rootless: conn.info().rootless ?? false,
    network: sandbox.network,
    readOnlyRoot: sandbox.limits.readOnlyRoot,
    memoryBytes: sandbox.limits.memoryBytes,
    pids: sandbox.limits.pids,
    workspace: sandbox.workspace,
    deep: o.deep,
    host: hostCgroupView(raw.State.Pid, sandbox.id),
  };
  const sockets = [...ENGINE_SOCKETS, conn.info().socketPath, o.home];
  const script = buildProbe({
    forbiddenPaths: [...new Set(sockets)],
    readOnlyRoot: expect.readOnlyRoot,
    deep: o.deep ? deepTries(expect) : null,
  });
  const run = await collectExec(conn, sandbox.id, {
    cmd: ['/bin/sh', '-c', script],
    timeoutMs: o.deep ? DEEP_TIMEOUT_MS : PLAIN_TIMEOUT_MS,
  });
  if (run.timedOut)
    throw new WardenError('E_ENGINE', `the attestation probe in ${sandbox.name} did not finish`, 'is the sandbox overloaded? try again');
  const sections = parseSections(run.stdout.toString('utf8'));
  const checks = [...plainChecks(sections, expect), ...(o.deep ? deepChecks(sections, expect) : [])];
  return {
    sandboxId: sandbox.id,
    name: sandbox.name,
    runtime: sandbox.runtime,
    deep: o.deep,
    ok: checks.every((c) => c.ok),
    time: new Date().toISOString(),
    durationMs: Date.now() - started,
    actor: o.actor,
    checks,
  };
}
