// GET /sandboxes/{id}/metrics for the e2b SDK (Sandbox.getMetrics): one sample of Warden's own stats
// (the engine's stream, the same the control panel graphs), taken now, after the gateway has checked
// that the caller may see the sandbox. Warden keeps no history, so a start/end range gets this one
// sample; disk use is not measured (0), the disk's size is.
import { WardenError } from '../../../shared/errors.js';
import type { E2bMetric } from '../../../shared/types/e2b.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { StatsSample } from '../../../shared/types/stats.js';
import type { WardenEngine } from '../../engine/engine.js';

/** Long enough for Podman's first stats read on a busy machine; a bound, not a wait. */
const SAMPLE_TIMEOUT_MS = 15_000;

function sampleOnce(engine: WardenEngine, id: string): Promise<StatsSample> {
  return new Promise((resolve, reject) => {
    let stopStream: (() => void) | null = null;
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      off();
      stopStream?.();
      fn();
    };
    const off = engine.events.on('stats.sample', (s) => s.sandboxId === id && finish(() => resolve(s)));
    const timer = setTimeout(
      () => finish(() => reject(new WardenError('E_TIMEOUT', 'no stats sample arrived from the engine'))),
      SAMPLE_TIMEOUT_MS,
    );
    engine.subscribeStats([id]).then(
      (sub) => (settled ? sub.stop() : (stopStream = () => sub.stop())),
      (err: unknown) => finish(() => reject(err instanceof Error ? err : new Error(String(err)))),
    );
  });
}

export async function metricsOf(engine: WardenEngine, info: SandboxInfo): Promise<E2bMetric[]> {
  const s = await sampleOnce(engine, info.id);
  const cpus = info.limits.cpus;
  return [
    {
      timestamp: new Date(s.time).toISOString(),
      timestampUnix: Math.floor(s.time / 1000),
      cpuCount: cpus,
      cpuUsedPct: Math.round((s.cpuPercent / Math.max(cpus, 1)) * 100) / 100,
      memUsed: s.memoryBytes,
      memTotal: s.memoryLimitBytes,
      memCache: 0,
      diskUsed: 0,
      diskTotal: info.limits.diskBytes ?? 0,
    },
  ];
}
