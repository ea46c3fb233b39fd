// One stream (stdout or stderr) of an exec: counts every byte, forwards at most `limit` of them.

/** Receives output; returning exactly false asks the producer to pause until the consumer drains. */
export type ChunkHandler = (chunk: Buffer) => unknown;

export class OutputSink {
  total = 0;
  kept = 0;
  truncated = false;
  /** Set when a handler call asked for a pause; the exec session clears it when it pauses. */
  wantsPause = false;

  constructor(
    private readonly limit: number,
    private readonly onChunk: ChunkHandler | undefined,
  ) {}

  /** Bound, so it can be handed to the demuxer as is. */
  readonly accept = (chunk: Buffer): void => {
    this.total += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) {
      this.truncated = true;
    } else if (chunk.length > room) {
      this.truncated = true;
      this.kept += room;
      if (this.onChunk?.(chunk.subarray(0, room)) === false) this.wantsPause = true;
    } else {
      this.kept += chunk.length;
      if (this.onChunk?.(chunk) === false) this.wantsPause = true;
    }
  };
}
