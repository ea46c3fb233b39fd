// Live resource samples at 1 Hz from libpod's stats stream, which computes CPU % itself and
// serves many containers over one connection.
import type { StatsSample } from '../../../shared/types/stats.js';
import type { PodmanConnection } from './connection.js';

interface LibpodStats {
  ContainerID: string;
  CPU: number;
  MemUsage: number;
  MemLimit: number;
  NetInput: number;
  NetOutput: number;
  BlockInput: number;
  BlockOutput: number;
  PIDs: number;
}

export function toStatsSample(s: LibpodStats, time: number): StatsSample {
  return {
    sandboxId: s.ContainerID,
    time,
    cpuPercent: Number.isFinite(s.CPU) ? Math.round(s.CPU * 100) / 100 : 0,
    memoryBytes: s.MemUsage,
    memoryLimitBytes: s.MemLimit,
    netRxBytes: s.NetInput,
    netTxBytes: s.NetOutput,
    blockReadBytes: s.BlockInput,
    blockWriteBytes: s.BlockOutput,
    pids: s.PIDs,
  };
}

export interface StatsSubscription {
  stop(): void;
  done: Promise<void>;
}

/** Streams samples of the given sandboxes (ids) every `intervalSeconds` until stopped or the engine goes. */
export async function subscribeStats(
  conn: PodmanConnection,
  ids: string[],
  onSample: (sample: StatsSample) => void,
  intervalSeconds = 1,
): Promise<StatsSubscription> {
  const query = new URLSearchParams({ stream: 'true', interval: String(intervalSeconds) });
  for (const id of ids) query.append('containers', id);
  // Podman's first report for a container divides its whole CPU time by a tiny interval
  // (values of several hundred percent); it is a baseline, not a sample.
  const seen = new Set<string>();
  const stream = await conn.libpodJsonStream(`/containers/stats?${query.toString()}`, 'stats', (value) => {
    const report = value as { Stats?: LibpodStats[] | null };
    const now = Date.now();
    for (const s of report.Stats ?? []) {
      if (!seen.has(s.ContainerID)) {
        seen.add(s.ContainerID);
        continue;
      }
      onSample(toStatsSample(s, now));
    }
  });
  const done = new Promise<void>((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', () => resolve());
  });
  return {
    stop: () => (stream as NodeJS.ReadableStream & { destroy(): void }).destroy(),
    done,
  };
}
