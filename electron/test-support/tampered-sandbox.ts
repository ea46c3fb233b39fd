// A sandbox whose labels promise less than it has: made through libpod directly (labels cannot be
// changed after create), so attestation and the policy built on it can be shown to catch it.
import { SandboxSpecSchema } from '../../shared/types/sandbox.js';
import { buildSpecGenerator, resolveSandbox } from '../engine/podman/container-spec.js';
import { hostLimits } from '../engine/podman/host-limits.js';
import { LABEL } from '../engine/podman/labels.js';
import { installSeccompProfile } from '../engine/podman/wall.js';
import type { TestEngine } from './podman-fixture.js';
import { TEST_LABEL_KEY } from './test-label.js';

/** Creates and starts it; labels claim `claimedBytes` of memory, the container really has `realBytes`. */
export async function createTampered(t: TestEngine, name: string, claimedBytes: number, realBytes: number): Promise<string> {
  const parsed = SandboxSpecSchema.parse({ name, memory: realBytes, labels: { [TEST_LABEL_KEY]: t.runId } });
  const runtime = t.engine.connection.defaultRuntime!;
  const ctx = {
    name,
    image: t.engine.sandboxes.defaultImage,
    runtime,
    rootless: false,
    hostLimits: hostLimits(),
    now: new Date(),
    seccompProfile: installSeccompProfile(t.home),
    wall: { workspaceOwner: null },
  };
  const gen = buildSpecGenerator(parsed, resolveSandbox(parsed, ctx), ctx);
  (gen.labels as Record<string, string>)[LABEL.memory] = String(claimedBytes);
  (gen.labels as Record<string, string>)[LABEL.home] = t.engine.sandboxes.homeId; // this home's, like any it made
  const creator = await t.engine.router.connectionFor(runtime);
  const made = await creator.libpod<{ Id: string }>('POST', '/containers/create', gen, 'tampered sandbox');
  await t.engine.connection.libpod('POST', `/containers/${made.Id}/start`, undefined, 'tampered sandbox', [204, 304]);
  return made.Id;
}
