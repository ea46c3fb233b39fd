// The part of a command's streamed stdin that does not depend on how the bytes travel, written once
// for both ways (plain-stdin.ts over an attached engine exec, runner-stdin.ts through the runner's
// STDIN frames): writes go out one after another in their order, a write after end() is refused,
// EOF follows what is still queued, and once the call is over (close) queued and later writes fail
// with why.
import { WardenError } from '../../../shared/errors.js';
import type { CommandInput } from './exec-handlers.js';

export abstract class QueuedStdin implements CommandInput {
  private tail: Promise<void> = Promise.resolve();
  protected over: WardenError | null = null;
  private ended = false;

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
      if (!this.over) this.sendEof();
    });
  }

  /** The call is over: queued and later writes fail with why. */
  close(why: string): void {
    this.over ??= new WardenError('E_CONFLICT', why);
  }

  /** Carries one write's bytes; resolves once the way to the command holds them. */
  protected abstract send(data: Buffer): Promise<void>;

  /** Tells the command its input has ended (after every queued write went out). */
  protected abstract sendEof(): void;
}
