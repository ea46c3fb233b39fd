// A command's stdin streamed over a plain engine exec (the path without the runner): bytes are
// written to the attached socket, and a write waits for it to drain, so a command that does not
// read fills Podman's pipe and the socket's buffers and then holds its writer back. The queue of
// writes, end and close are queued-stdin.ts's.
import type { Duplex } from 'node:stream';
import { QueuedStdin } from './queued-stdin.js';

export class PlainStdin extends QueuedStdin {
  constructor(private readonly stream: Duplex) {
    super();
    const gone = () => this.close('the command has ended');
    stream.once('close', gone);
    stream.once('end', gone);
  }

  protected sendEof(): void {
    this.stream.end();
  }

  protected send(data: Buffer): Promise<void> {
    if (this.over) return Promise.reject(this.over);
    if (this.stream.write(data)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const settle = () => {
        this.stream.off('drain', settle);
        this.stream.off('close', settle);
        if (this.over) reject(this.over);
        else resolve();
      };
      this.stream.on('drain', settle);
      this.stream.on('close', settle);
    });
  }
}
