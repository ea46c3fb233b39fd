// `warden run …`: runs, their tool calls and pending approvals, from the running Warden (the app or
// `warden serve`), reached through WARDEN_HOME/server.json with the user's token.
import type { Command } from 'commander';
import { WardenError } from '../../../shared/errors.js';
import type { RunInfo, ToolCallInfo } from '../../../shared/types/run.js';
import { ensureWardenHome } from '../../engine/paths.js';
import type { AgentClient } from '../../server/client.js';
import { findServer } from '../../server/server-file.js';
import { printJson, runCommand } from '../output.js';
import { registerRunExport } from './run-export.js';

async function client(): Promise<AgentClient> {
  const home = ensureWardenHome();
  const server = await findServer(home);
  if (!server)
    throw new WardenError(
      'E_ENGINE_UNREACHABLE',
      'no running Warden for this WARDEN_HOME: runs live in the app or `warden serve`',
      'start `warden serve`; the ledger keeps the record of past runs',
    );
  const [{ AgentClient }, { TokenStore }] = await Promise.all([import('../../server/client.js'), import('../../server/tokens.js')]);
  return new AgentClient(server.url, new TokenStore(home).userToken());
}

function runLine(r: RunInfo): string {
  return `${r.id}  ${r.agent.padEnd(16)} ${(r.sandboxName ?? '-').padEnd(20)} ${r.status.padEnd(8)} calls ${String(r.calls).padStart(4)}  breaker ${r.breaker.state}\n`;
}

function callLine(c: ToolCallInfo): string {
  const what = c.tool === 'exec' ? ((c.args.argv as string[]) ?? []).join(' ') : String(c.args.path ?? c.args.name ?? c.args.ref ?? '');
  const end = c.exitCode !== null ? `exit ${c.exitCode}` : c.error ? c.error.code : '';
  return `${String(c.index).padStart(4)}  ${c.tool.padEnd(15)} ${c.status.padEnd(17)} ${end.padEnd(16)} ${what.slice(0, 80)}  [ledger ${c.ledgerSeqs.join(',') || '-'}]\n`;
}

export function registerRun(program: Command): void {
  const run = program.command('run').description("agents' runs, tool calls and approvals (from the running Warden)");
  run
    .command('ls')
    .option('--agent <name>')
    .option('--json')
    .action((o: { agent?: string; json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const runs = (await (await client()).request('run.list')).filter((r) => !o.agent || r.agent === o.agent);
        if (o.json) return printJson(runs);
        runs.forEach((r) => process.stdout.write(runLine(r)));
      }),
    );
  run
    .command('show')
    .argument('<run>')
    .option('--json')
    .action((id: string, o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const detail = await (await client()).request('run.get', { params: { run: id } });
        if (o.json) return printJson(detail);
        process.stdout.write(runLine(detail));
        detail.toolCalls.forEach((c) => process.stdout.write(callLine(c)));
      }),
    );
  run
    .command('diff')
    .description('what the run changed in its sandbox’s /workspace since its first call there')
    .argument('<run>')
    .option('--json', 'print the diff as JSON')
    .action((id: string, o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { printDiff } = await import('../diff-format.js');
        printDiff(!!o.json, await (await client()).request('run.diff', { params: { run: id } }));
      }),
    );
  registerRunExport(run, client);
  run
    .command('follow')
    .description('print the run, then each call as it changes, until the run ends')
    .argument('<run>')
    .action((id: string) =>
      runCommand(false, async () => {
        await (
          await client()
        ).stream('run.events', { params: { run: id } }, (e) => {
          if (e.type === 'snapshot') {
            process.stdout.write(runLine(e.run));
            e.run.toolCalls.forEach((x) => process.stdout.write(callLine(x)));
          } else if (e.type === 'call') process.stdout.write(callLine(e.call));
          else if (e.run.status !== 'active') process.stdout.write(`run ${e.run.status}\n`);
        });
      }),
    );
  run
    .command('approvals')
    .description('list calls waiting for a decision')
    .option('--json')
    .action((o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const list = await (await client()).request('approval.list');
        if (o.json) return printJson(list);
        for (const a of list) {
          process.stdout.write(`${a.id}  ${a.agent}  ${a.summary}  (until ${a.deadline}: ${a.reason})\n`);
          for (const p of a.programs ?? []) process.stdout.write(`    needs approval: ${p}\n`);
          // A write's diff, from inside a sandbox: its control characters never reach the terminal.
          if (a.effect) {
            const { clean } = await import('../diff-format.js');
            process.stdout.write(`    effect (sha256 ${a.effect.sha256}):\n`);
            for (const line of clean(a.effect.text).replace(/\n$/, '').split('\n')) process.stdout.write(`      ${line}\n`);
          }
        }
      }),
    );
  for (const [verb, desc] of [
    ['approve', 'let a waiting call run (--always: and, for the rest of its run, the programs it lists)'],
    ['deny', 'refuse a waiting call'],
  ] as const) {
    run
      .command(verb)
      .description(desc)
      .argument('<approval>')
      .option('--always', 'approve for the rest of the run')
      .option('--json')
      .action((id: string, o: { always?: boolean; json?: boolean }) =>
        runCommand(!!o.json, async () => {
          const a = await (
            await client()
          ).request('approval.decide', {
            params: { id },
            body: { decision: verb === 'deny' ? 'deny' : o.always ? 'approve-run' : 'approve-once' },
          });
          if (o.json) return printJson(a);
          process.stdout.write(`${a.status}: ${a.summary}\n`);
        }),
      );
  }
}
