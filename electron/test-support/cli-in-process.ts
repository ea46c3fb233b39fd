// `warden …` inside the spec's own process: the command groups a spec names, registered on a fresh
// commander program, with stdout, stderr and the exit code captured. Faster than a child per call,
// and the spec can hold the engine or server the command finds. One copy for every CLI spec.
import { Command } from 'commander';
import { vi } from 'vitest';

export interface CliAnswer {
  code: number;
  out: string;
  err: string;
}

export async function runCliInProcess(groups: Array<(program: Command) => void>, args: string[]): Promise<CliAnswer> {
  const program = new Command('warden').exitOverride();
  for (const register of groups) register(program);
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true));
  process.exitCode = 0;
  try {
    await program.parseAsync(['node', 'warden', ...args]);
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { code, out, err };
}
