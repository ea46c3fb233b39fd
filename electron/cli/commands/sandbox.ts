import type { Command } from 'commander';

export function registerSandbox(program: Command): void {
  void program;
}
