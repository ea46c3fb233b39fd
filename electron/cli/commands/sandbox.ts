// `warden sandbox …`. Only the option definitions load with the CLI; validation (zod) and the backend
// are imported by the action that runs, so `--help` and other commands skip them.
import type { Command } from 'commander';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { LifecycleVerb } from '../backend.js';
import { printResult, runCommand } from '../output.js';
import { collectPairs, pairsToRecord, parseIntegerOption, parseNumberOption } from '../parse-options.js';
import { formatSandboxTable } from '../sandbox-table.js';
import { formatAttestation } from '../attestation-format.js';
import { resolve } from 'node:path';
import { registerSnapshotCommands } from './snapshot.js';

/** What every sandbox action needs, loaded when one runs. */
async function load() {
  const [{ parseRequest }, { withBackend, lifecycle }] = await Promise.all([
    import('../../../shared/contracts/validate.js'),
    import('../backend.js'),
  ]);
  return { parseRequest, withBackend, lifecycle };
}

interface CreateOptions {
  name?: string;
  image?: string;
  memory?: string;
  cpus?: string;
  pids?: string;
  network?: string;
  workspace?: string;
  runtime?: string;
  env?: string[];
  label?: string[];
  ttl?: string;
  readOnly?: boolean;
  tmpSize?: string;
  disk?: string;
  json?: boolean;
}

function describe(info: SandboxInfo): string {
  return `${info.name} ${info.state} (${info.runtime}, ${info.id.slice(0, 12)})\n`;
}

export function registerSandbox(program: Command): void {
  const sandbox = program.command('sandbox').description('create, list and manage sandboxes');

  sandbox
    .command('create')
    .description('create and start a sandbox')
    .option('--name <name>', 'sandbox name (default: sbx-<random>)')
    .option('--image <image>', 'image (default: the offline-built localhost/warden-sandbox)')
    .option('--memory <size>', 'memory limit, e.g. 512m or 2g', '512m')
    .option('--cpus <n>', 'CPU limit in cores, e.g. 1 or 0.5', '1')
    .option('--pids <n>', 'process limit', '256')
    .option('--network <mode>', "none (default), nat, or egress (out only through Warden's proxy, by the policy's egress rules)", 'none')
    .option('--workspace <dir>', 'host directory bind-mounted at /workspace')
    .option('--runtime <name>', 'runc, crun, runsc (gVisor) or krun (default: the first of crun, runc that works here)')
    .option('--env <KEY=VALUE>', 'environment variable (repeatable)', collectPairs)
    .option('--label <KEY=VALUE>', 'label (repeatable)', collectPairs)
    .option('--ttl <seconds>', 'destroy the sandbox after this many seconds')
    .option('--read-only', 'read-only root filesystem with a size-limited tmpfs /tmp')
    .option('--tmp-size <size>', 'size of /tmp with --read-only', '64m')
    .option('--disk <size>', 'disk limit for what the sandbox writes (root layer, /tmp), e.g. 4g', '4g')
    .option('--json', 'print the sandbox as JSON')
    .action((o: CreateOptions) =>
      runCommand(!!o.json, async () => {
        const { parseRequest, withBackend } = await load();
        const spec = parseRequest('sandbox.create', {
          name: o.name,
          image: o.image,
          memory: o.memory,
          cpus: parseNumberOption('cpus', o.cpus),
          pids: parseIntegerOption('pids', o.pids),
          network: o.network,
          workspace: o.workspace === undefined ? undefined : resolve(o.workspace),
          runtime: o.runtime,
          env: pairsToRecord('env', o.env),
          labels: pairsToRecord('label', o.label),
          ttlSeconds: parseIntegerOption('ttl', o.ttl),
          readOnlyRoot: o.readOnly,
          tmpSize: o.readOnly ? o.tmpSize : undefined,
          disk: o.disk,
        });
        const info = await withBackend((b) => b['sandbox.create']({ body: spec }));
        printResult(!!o.json, info, describe);
      }),
    );

  sandbox
    .command('ls')
    .alias('list')
    .description('list Warden sandboxes')
    .option('--json', 'print the list as JSON')
    .action((o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { withBackend } = await import('../backend.js');
        const list = await withBackend((b) => b['sandbox.list']());
        printResult(!!o.json, list, formatSandboxTable);
      }),
    );

  sandbox
    .command('inspect <name>')
    .description('show one sandbox')
    .option('--json', 'print as JSON')
    .action((name: string, o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { parseRequest, withBackend } = await load();
        const { ref } = parseRequest('sandbox.inspect', { ref: name });
        const info = await withBackend((b) => b['sandbox.inspect']({ params: { id: ref } }));
        printResult(!!o.json, info, (i) => formatSandboxTable([i]));
      }),
    );

  sandbox
    .command('diff <name>')
    .description('what changed in the sandbox’s /workspace since it was created: unified diffs for text, a summary for the rest')
    .option('--json', 'print the diff as JSON')
    .action((name: string, o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const [{ parseRequest, withBackend }, { printDiff }] = await Promise.all([load(), import('../diff-format.js')]);
        const { ref } = parseRequest('sandbox.inspect', { ref: name });
        printDiff(!!o.json, await withBackend((b) => b['sandbox.diff']({ params: { id: ref } })));
      }),
    );

  const verbs: Array<[LifecycleVerb, string]> = [
    ['start', 'start a stopped sandbox'],
    ['stop', 'stop a sandbox (its filesystem is kept)'],
    ['restart', 'restart a sandbox'],
    ['pause', 'freeze every process in a sandbox'],
    ['resume', 'unfreeze a paused sandbox'],
  ];
  for (const [verb, help] of verbs) {
    sandbox
      .command(`${verb} <name>`)
      .description(help)
      .option('--json', 'print the sandbox as JSON')
      .action((name: string, o: { json?: boolean }) =>
        runCommand(!!o.json, async () => {
          const { parseRequest, withBackend, lifecycle } = await load();
          const { ref } = parseRequest(`sandbox.${verb}`, { ref: name });
          const info = await withBackend((b) => lifecycle(b, verb, ref));
          printResult(!!o.json, info, describe);
        }),
      );
  }

  sandbox
    .command('ttl <name> <seconds>')
    .description('make a sandbox expire SECONDS from now, or never (`none`); kept in WARDEN_HOME over the TTL set at create')
    .option('--json', 'print the sandbox as JSON')
    .action((name: string, seconds: string, o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const [{ parseRequest, withBackend }, { parseWith }, { TtlRequestSchema }] = await Promise.all([
          load(),
          import('../../../shared/contracts/parse.js'),
          import('../../../shared/types/api.js'),
        ]);
        const { ref } = parseRequest('sandbox.inspect', { ref: name });
        const body = parseWith(TtlRequestSchema, { ttlSeconds: seconds === 'none' ? null : Number(seconds) }, 'ttl');
        const info = await withBackend((b) => b['sandbox.ttl']({ params: { id: ref }, body }));
        printResult(!!o.json, info, (s) => `${s.name} expires ${s.expiresAt ?? 'never'}\n`);
      }),
    );

  sandbox
    .command('attest <name>')
    .description('check from inside that every promise holds (exit 0 only if all do); recorded in the ledger')
    .option('--deep', 'also meet the pids and memory limits in child processes, try a user namespace and the cgroup files')
    .option('--json', 'print the attestation as JSON')
    .action((name: string, o: { deep?: boolean; json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { parseRequest, withBackend } = await load();
        const { ref, deep } = parseRequest('sandbox.attest', { ref: name, deep: o.deep });
        const result = await withBackend((b) => b.attest(ref, deep ?? false));
        printResult(!!o.json, result, formatAttestation);
        return result.ok ? 0 : 1;
      }),
    );

  sandbox
    .command('rm <name>')
    .alias('destroy')
    .description('destroy a sandbox and its filesystem (a --workspace directory stays on the host)')
    .option('--json', 'print what was removed as JSON')
    .action((name: string, o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { parseRequest, withBackend } = await load();
        const { ref } = parseRequest('sandbox.destroy', { ref: name });
        const gone = await withBackend((b) => b['sandbox.destroy']({ params: { id: ref } }));
        printResult(!!o.json, { removed: gone }, (r) => `removed ${r.removed.name}\n`);
      }),
    );

  registerSnapshotCommands(sandbox);
}
