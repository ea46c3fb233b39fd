// A terminal as its users see it, whichever way it runs (a Podman TTY exec, or a pseudo-terminal
// the sandbox's runner opens): terminal-session.ts picks the way, runner/runner-terminal.ts is one.
import type { TerminalSize } from '../../../shared/types/exec.js';

export interface TerminalSession {
  readonly execId: string;
  write(data: string | Buffer): void;
  resize(size: TerminalSize): Promise<void>;
  onData(fn: (chunk: Buffer) => void): void;
  /**
   * Stops reading the shell's output until resume(): the engine's socket fills, and the process
   * in the sandbox blocks on its next write, so a slow reader slows the writer instead of
   * buffering without end.
   */
  pause(): void;
  resume(): void;
  /** Resolves with the shell's exit code (null when the engine went away). */
  readonly exited: Promise<number | null>;
  close(): void;
}

/**
 * The output's listeners. What the shell writes before the first one attaches (its prompt, during
 * the first resize) is held and handed to it, not dropped.
 */
export class TerminalOutput {
  private readonly listeners: Array<(chunk: Buffer) => void> = [];
  private early: Buffer[] | null = [];

  push(chunk: Buffer): void {
    if (this.early) this.early.push(chunk);
    else for (const fn of this.listeners) fn(chunk);
  }

  listen(fn: (chunk: Buffer) => void): void {
    this.listeners.push(fn);
    if (!this.early) return;
    const held = this.early;
    this.early = null;
    for (const chunk of held) fn(chunk);
  }
}
