// The start of a command's output, kept for its record: the ledger's exec.finished entry and the
// run's call both show the first PREVIEW_BYTES of what a command printed; the whole of it is counted
// and hashed elsewhere, so the preview never grows with the output.
export const PREVIEW_BYTES = 512;

export class OutputPreview {
  private readonly chunks: Buffer[] = [];
  private kept = 0;

  add(chunk: Buffer): void {
    if (this.kept >= PREVIEW_BYTES) return;
    this.chunks.push(chunk);
    this.kept += chunk.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).subarray(0, PREVIEW_BYTES).toString('utf8');
  }
}
