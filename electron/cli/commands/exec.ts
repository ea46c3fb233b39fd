import type { Command } from 'commander';

export function registerExec(program: Command): void {
  void program;
}
