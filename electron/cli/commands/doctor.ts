import type { Command } from 'commander';

export function registerDoctor(program: Command): void {
  void program;
}
