// `warden doctor`: the engine loads only when it runs.
import type { Command } from 'commander';
import { toErrorInfo } from '../../../shared/errors.js';
import type { DoctorReport } from '../../../shared/types/engine.js';
import { ensureWardenHome } from '../../engine/paths.js';
import type { PodmanEngine } from '../../engine/podman/podman-engine.js';
import { printJson, runCommand } from '../output.js';

function printReport(report: DoctorReport): void {
  for (const check of report.checks) {
    process.stdout.write(`${check.ok ? 'ok  ' : 'FAIL'}  ${check.name.padEnd(16)} ${check.detail}\n`);
    if (check.fix && (!check.ok || check.name.startsWith('runtime '))) process.stdout.write(`      ${''.padEnd(16)} fix: ${check.fix}\n`);
  }
  process.stdout.write(report.ok ? '\nWarden can run sandboxes here.\n' : '\nSandboxes cannot run yet: fix the lines marked FAIL.\n');
}

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check the engine, socket, runtimes, image and data directory')
    .option('--json', 'print the report as JSON')
    .option('--fresh', 'probe the runtimes again instead of using the cached result')
    .action((opts: { json?: boolean; fresh?: boolean }) =>
      runCommand(!!opts.json, async () => {
        const home = ensureWardenHome();
        const [{ runDoctor }, { openPodman }] = await Promise.all([import('../../engine/doctor.js'), import('../open-engine.js')]);
        let engine: PodmanEngine | null = null;
        let report: DoctorReport;
        try {
          engine = await openPodman();
          report = await runDoctor({ home, env: process.env, engine, fresh: !!opts.fresh });
        } catch (err) {
          report = await runDoctor({ home, env: process.env, engine: null, openError: toErrorInfo(err), fresh: false });
        } finally {
          engine?.close();
        }
        if (opts.json) printJson(report);
        else printReport(report);
        return report.ok ? 0 : 1;
      }),
    );
}
