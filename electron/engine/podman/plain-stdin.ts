// A command's stdin streamed over a plain engine exec (the path without the runner): bytes are
// written to the attached socket, and a write waits for it to drain, so a command that does not
// read fills Podman's pipe and the socket's buffers and then holds its writer back.
import type { Duplex } from 'node:stream';
import { WardenError } from '../../../shared/errors.js';
import type { CommandInput } from './exec-handlers.js';

export class PlainStdin implements CommandInput {
  private tail: Promise<void> = Promise.resolve();
  private over: WardenError | null = null;
  private ended = false;

  constructor(private readonly stream: Duplex) {
    const gone = () => this.close('the command has ended');
    stream.once('close', gone);
    stream.once('end', gone);
  }

  write(data: Buffer): Promise<void> {
    if (this.over) return Promise.reject(this.over);
    if (this.ended) return Promise.reject(new WardenError('E_CONFLICT', "the command's stdin is closed"));
    const done = this.tail.then(() => this.send(data));
    this.tail = done.catch(() => undefined);
    return done;
  }

  end(): void {
    if (this.ended || this.over) return;
    this.ended = true;
    void this.tail.then(() => {
      if (!this.over) this.stream.end();
    });
  }

  close(why: string): void {
    this.over ??= new WardenError('E_CONFLICT', why);
  }

  private send(data: Buffer): Promise<void> {
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
