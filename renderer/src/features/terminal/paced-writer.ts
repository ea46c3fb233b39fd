// Output into xterm at a pace the page can afford. xterm parses each write and then renders on the
// next animation frame: fed every message of a torrent (200 a second), the page re-lays out and
// repaints the whole screen 60 times a second, and that, not parsing, is most of its time. Here
// output is written at once while it comes in small pieces (a keystroke's echo waits for
// nothing); after a big write, what follows is joined and written at most once per `paceMs`, and
// only after xterm has parsed the last write (its write callback): one parse and one render per
// interval, whatever the message rate. Nothing is dropped; xterm keeps its own limit on what
// waits unparsed.

export interface WriteTarget {
  write(data: string, parsed: () => void): void;
}

export class PacedWriter {
  private queued: string[] = [];
  private writing = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastWriteAt = -Infinity;
  private lastWriteChars = 0;
  private disposed = false;

  constructor(
    private readonly target: WriteTarget,
    private readonly paceMs: number,
    /** A write at least this long starts pacing: what follows waits for the interval. */
    private readonly bigChars: number,
    /** Sees every text before it is written and may shorten it (see unseen-output.ts). */
    private readonly prepare: (data: string) => string = (data) => data,
    private readonly now: () => number = () => performance.now(),
  ) {}

  write(data: string): void {
    if (this.disposed || data === '') return;
    this.queued.push(data);
    this.schedule();
  }

  /** Stops writing; what is still queued is dropped (the terminal is going away). */
  dispose(): void {
    this.disposed = true;
    this.queued = [];
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.writing || this.timer !== null || this.queued.length === 0) return;
    const wait = this.lastWriteChars >= this.bigChars ? this.lastWriteAt + this.paceMs - this.now() : 0;
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(this.onTimer, wait);
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    this.flush();
  };

  private flush(): void {
    if (this.disposed || this.queued.length === 0) return;
    const joined = this.queued.length === 1 ? this.queued[0]! : this.queued.join('');
    this.queued = [];
    // Paced by what came, not by what is left to parse.
    this.lastWriteChars = joined.length;
    const data = this.prepare(joined);
    this.writing = true;
    this.lastWriteAt = this.now();
    this.target.write(data, this.onParsed);
  }

  private readonly onParsed = (): void => {
    this.writing = false;
    if (!this.disposed) this.schedule();
  };
}
