import { describe, expect, it } from 'vitest';
import { SandboxSpecSchema } from '../../../shared/types/sandbox.js';
import { PolicySchema } from '../../../shared/types/policy.js';
import { parseWith } from '../../../shared/contracts/parse.js';
import { buildSpecGenerator, resolveSandbox, type BuildContext } from './container-spec.js';
import { exitReason } from './exit-reason.js';
import { hostPidsLimit, ociRuntimeArg, runscWrapperPath, runtimeFromInspect } from './oci-runtime.js';
import { infoFromInspect, type LibpodInspect } from './sandbox-info.js';
import { readFileSync } from 'node:fs';
import { defaultPolicyPath, parsePolicy } from '../gateway/policy-load.js';

const ctx: BuildContext = {
  name: 'box',
  image: 'localhost/warden-sandbox:1',
  runtime: 'runsc',
  rootless: false,
  hostLimits: { nofileHard: 20000, nprocHard: 96365 },
  now: new Date('2026-01-01T00:00:00Z'),
  seccompProfile: null,
  wall: { workspaceOwner: null },
};

function inspectOf(
  ociRuntime: string,
  state: { Status: string; ExitCode: number; OOMKilled?: boolean },
  runtimeLabel = 'runsc',
): LibpodInspect {
  return {
    Id: 'abc',
    Name: 'box',
    Created: '2026-01-01T00:00:00Z',
    ImageName: 'img',
    Image: 'c0ffee',
    OCIRuntime: ociRuntime,
    State: { OOMKilled: false, StartedAt: '2026-01-01T00:00:00Z', Pid: 0, ...state },
    Config: { Labels: { 'warden.managed': 'true', 'warden.runtime': runtimeLabel } },
    HostConfig: { Memory: 0, NanoCpus: 0, CpuQuota: 0, CpuPeriod: 0, PidsLimit: 0, ReadonlyRootfs: false },
  };
}

describe('runsc through the wrapper', () => {
  it('hands Podman the wrapper’s absolute path for runsc and plain names for the others', () => {
    const wrapper = runscWrapperPath();
    expect(wrapper).toMatch(/^\/.*\/resources\/runtimes\/runsc-warden$/);
    expect(ociRuntimeArg('runsc')).toBe(wrapper);
    expect(ociRuntimeArg('runc')).toBe('runc');
  });

  it('calls a sandbox runsc only when inspect names the wrapper’s exact path', () => {
    expect(runtimeFromInspect(runscWrapperPath()!)).toBe('runsc');
    expect(runtimeFromInspect('runc')).toBe('runc');
    // Another wrapper at another path is not taken for Warden's: it stays what Podman said.
    expect(runtimeFromInspect('/elsewhere/resources/runtimes/runsc-warden')).toBe('/elsewhere/resources/runtimes/runsc-warden');
    // The label asked for runsc, but Podman ran runc: inspect wins.
    expect(infoFromInspect(inspectOf('runc', { Status: 'running', ExitCode: 0 })).runtime).toBe('runc');
    expect(infoFromInspect(inspectOf(runscWrapperPath()!, { Status: 'running', ExitCode: 0 })).runtime).toBe('runsc');
  });

  it('scales the host pids limit for gVisor and keeps the guest’s number in the label', () => {
    const spec = SandboxSpecSchema.parse({ runtime: 'runsc', pids: 100 });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a loose JSON shape read field by field
    const g = buildSpecGenerator(spec, resolveSandbox(spec, ctx), ctx) as Record<string, any>;
    expect(g.resource_limits.pids.limit).toBe(hostPidsLimit('runsc', 100));
    expect(hostPidsLimit('runsc', 100)).toBeGreaterThanOrEqual(200);
    expect(g.labels['warden.pids']).toBe('100');
    expect(g.oci_runtime).toBe(runscWrapperPath());
    expect(hostPidsLimit('runc', 100)).toBe(100);
  });
});

describe('why a sandbox ended', () => {
  it('names the memory and pids limits for a gVisor sandbox, and nothing for runc or a stop', () => {
    expect(exitReason('runsc', 137, false)).toMatch(/memory limit/);
    expect(exitReason('runsc', 2, false)).toMatch(/pids limit/);
    expect(exitReason('runsc', 143, false)).toBeNull();
    expect(exitReason('runc', 137, false)).toBeNull();
    expect(exitReason('runc', 137, true)).toMatch(/OOM killer/);
    expect(infoFromInspect(inspectOf(runscWrapperPath()!, { Status: 'exited', ExitCode: 2 })).exitReason).toMatch(/pids limit/);
    expect(infoFromInspect(inspectOf(runscWrapperPath()!, { Status: 'running', ExitCode: 0 })).exitReason).toBeNull();
  });
});

describe('policy create.requireRuntime', () => {
  it('must be one of the runtimes agents may use', () => {
    const p = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'policy.default.yaml');
    expect(PolicySchema.safeParse({ ...p, create: { ...p.create, requireRuntime: 'runsc' } }).success).toBe(true);
    expect(() => parseWith(PolicySchema, { ...p, create: { ...p.create, runtimes: ['runc'], requireRuntime: 'runsc' } }, 'policy')).toThrow(
      /requireRuntime must be one of runtimes/,
    );
  });
});
