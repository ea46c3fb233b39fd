import type { Command } from 'commander';

export function registerAudit(program: Command): void {
  void program;
}
