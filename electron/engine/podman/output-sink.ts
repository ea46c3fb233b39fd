// One stream (stdout or stderr) of an exec: counts every byte, forwards at most `limit` of them.

export type ChunkHandler = (chunk: Buffer) => void;

export class OutputSink {
  total = 0;
  kept = 0;
  truncated = false;

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
      this.onChunk?.(chunk.subarray(0, room));
    } else {
      this.kept += chunk.length;
      this.onChunk?.(chunk);
    }
  };
}
