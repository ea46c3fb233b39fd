// One stream (stdout or stderr) of an exec: counts every byte, forwards at most `limit` of them,
// and, when given an allowance shared with other sinks, no more than that allowance grants.

/** Receives output; returning exactly false asks the producer to pause until the consumer drains. */
export type ChunkHandler = (chunk: Buffer) => unknown;

/**
 * Bytes several sinks (both streams of an exec, every exec of a run) may forward between them.
 * take(n) grants at most n and charges what it grants at once, so sinks running side by side can
 * never forward more in total than the allowance holds.
 */
export interface OutputAllowance {
  take(n: number): number;
}

export class OutputSink {
  total = 0;
  kept = 0;
  truncated = false;
  /** Set when a handler call asked for a pause; the exec session clears it when it pauses. */
  wantsPause = false;

  constructor(
    private readonly limit: number,
    private readonly onChunk: ChunkHandler | undefined,
    private readonly allowance?: OutputAllowance,
  ) {}

  /** Bound, so it can be handed to the demuxer as is. */
  readonly accept = (chunk: Buffer): void => {
    this.total += chunk.length;
    let room = Math.max(0, Math.min(chunk.length, this.limit - this.kept));
    if (room > 0 && this.allowance) room = this.allowance.take(room);
    if (room < chunk.length) this.truncated = true;
    if (room <= 0) return;
    this.kept += room;
    if (this.onChunk?.(room < chunk.length ? chunk.subarray(0, room) : chunk) === false) this.wantsPause = true;
  };
}
