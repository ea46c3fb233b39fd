// `warden sandbox snapshot | snapshots | snapshot-rm | reset | fork`: snapshots of a sandbox and the
// ways back to one (engine/snapshot/). Like the other sandbox verbs they go through a running Warden
// when there is one (a run of the user's) and through the engine in this process otherwise; the
// input is checked with the route map's schemas before either.
import type { Command } from 'commander';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import type { SnapshotInfo } from '../../../shared/types/snapshot.js';
import { formatByteSize } from '../../../shared/types/units.js';
import { printResult, runCommand } from '../output.js';
import { alignColumns } from '../text-table.js';

async function load() {
  const [{ parseWith }, { AgentRoutes }, { SandboxRefSchema }, { SnapshotTagSchema }, { withBackend }] = await Promise.all([
    import('../../../shared/contracts/parse.js'),
    import('../../../shared/contracts/agent-routes.js'),
    import('../../../shared/types/sandbox.js'),
    import('../../../shared/types/snapshot.js'),
    import('../backend.js'),
  ]);
  const ref = (name: string) => parseWith(SandboxRefSchema, name, 'sandbox');
  const tag = (value: string) => parseWith(SnapshotTagSchema, value, 'tag');
  return { parseWith, AgentRoutes, ref, tag, withBackend };
}

function describeSnapshot(s: SnapshotInfo): string {
  return `snapshot ${s.tag} of ${s.sandbox}: root ${formatByteSize(s.rootBytes)} (image ${s.imageId.slice(0, 12)}), workspace ${formatByteSize(s.workspaceBytes)} (sha256 ${s.workspaceSha256.slice(0, 16)}…)\n`;
}

export function formatSnapshotTable(list: SnapshotInfo[]): string {
  if (list.length === 0) return 'No snapshots. Take one with `warden sandbox snapshot NAME`.\n';
  const rows = [['TAG', 'TAKEN', 'BY', 'ROOT', 'WORKSPACE', 'IMAGE']];
  for (const s of list)
    rows.push([s.tag, s.createdAt, s.takenBy, formatByteSize(s.rootBytes), formatByteSize(s.workspaceBytes), s.imageId.slice(0, 12)]);
  return alignColumns(rows);
}

const describeSandbox = (verb: string) => (info: SandboxInfo) => `${verb} ${info.name} ${info.state} (${info.id.slice(0, 12)})\n`;

export function registerSnapshotCommands(sandbox: Command): void {
  sandbox
    .command('snapshot <name>')
    .description("save a sandbox's root filesystem changes and /workspace under a tag (default: the time)")
    .option('--tag <tag>', 'name of the snapshot (letters, digits, _ . -)')
    .option('--json', 'print the snapshot as JSON')
    .action((name: string, o: { tag?: string; json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { AgentRoutes, parseWith, ref, withBackend } = await load();
        const body = parseWith(AgentRoutes['sandbox.snapshot'].body, o.tag === undefined ? {} : { tag: o.tag }, 'snapshot');
        const snap = await withBackend((b) => b['sandbox.snapshot']({ params: { id: ref(name) }, body }));
        printResult(!!o.json, snap, describeSnapshot);
      }),
    );

  sandbox
    .command('snapshots <name>')
    .description('list the snapshots of a sandbox with their sizes')
    .option('--json', 'print the list as JSON')
    .action((name: string, o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { ref, withBackend } = await load();
        const list = await withBackend((b) => b['sandbox.snapshots']({ params: { id: ref(name) } }));
        printResult(!!o.json, list, formatSnapshotTable);
      }),
    );

  sandbox
    .command('snapshot-rm <name> <tag>')
    .description('remove a snapshot (its image and workspace archive)')
    .option('--json', 'print what was removed as JSON')
    .action((name: string, t: string, o: { json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { ref, tag, withBackend } = await load();
        const gone = await withBackend((b) => b['snapshot.remove']({ params: { id: ref(name), tag: tag(t) } }));
        printResult(!!o.json, { removed: gone }, (r) => `removed snapshot ${r.removed.tag} of ${r.removed.sandbox}\n`);
      }),
    );

  sandbox
    .command('reset <name>')
    .description('put a sandbox back to a snapshot: recreated under the same name, its files as they were')
    .requiredOption('--to <tag>', 'the snapshot to go back to')
    .option('--json', 'print the sandbox as JSON')
    .action((name: string, o: { to: string; json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { ref, tag, withBackend } = await load();
        const info = await withBackend((b) => b['sandbox.reset']({ params: { id: ref(name) }, body: { to: tag(o.to) } }));
        printResult(!!o.json, info, describeSandbox(`reset to ${o.to}:`));
      }),
    );

  sandbox
    .command('fork <name>')
    .description('create a new sandbox from a snapshot, beside the original')
    .requiredOption('--from <tag>', 'the snapshot to start from')
    .requiredOption('--name <new>', 'name of the new sandbox')
    .option('--json', 'print the new sandbox as JSON')
    .action((name: string, o: { from: string; name: string; json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const { AgentRoutes, parseWith, ref, withBackend } = await load();
        const body = parseWith(AgentRoutes['sandbox.fork'].body, { from: o.from, name: o.name }, 'fork');
        const info = await withBackend((b) => b['sandbox.fork']({ params: { id: ref(name) }, body }));
        printResult(!!o.json, info, describeSandbox('forked'));
      }),
    );
}
