export interface StatsSample {
  sandboxId: string;
  /** ms since epoch when the engine read it */
  time: number;
  /** percent of one core (200 = two cores busy) */
  cpuPercent: number;
  memoryBytes: number;
  memoryLimitBytes: number;
  netRxBytes: number;
  netTxBytes: number;
  blockReadBytes: number;
  blockWriteBytes: number;
  pids: number;
}
