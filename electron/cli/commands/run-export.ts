// `warden run export RUN --patch FILE | --repo DIR --branch NAME`: a run's workspace changes taken
// home. The diff comes from the running Warden (which records it as `run.diffed`), and so do the exact
// bytes of files a text patch cannot carry (export-bytes.ts); the patch is made and applied here, on
// the host, with the host's git (no credential enters a sandbox). Each export is a `run.exported`
// ledger entry with the digests of exactly the diff and the patch, recorded the way `warden audit` writes.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { RunExportedPayload } from '../../../shared/types/run-export.js';
import type { RunDetail } from '../../../shared/types/run.js';
import type { AgentClient } from '../../server/client.js';
import type { ByteChange } from '../git-export.js';
import { printResult, runCommand } from '../output.js';

async function openLedger() {
  const { Ledger, defaultKeyDir, defaultLedgerFile } = await import('../../engine/ledger/index.js');
  // No schedule in a short-lived CLI process (as `warden audit checkpoint`).
  return Ledger.open(defaultLedgerFile(), { keyDir: defaultKeyDir(), checkpointEveryMs: 0, checkpointOnClose: false });
}

function commitMessage(
  run: RunDetail,
  patch: { sha256: string; left: Array<{ path: string; why: string }>; staged: number },
  ledger: string,
): string {
  const box = `${run.sandboxName ?? '-'} (${run.sandboxId ?? '-'})`;
  let text = `Warden run ${run.id} by agent ${run.agent} in sandbox ${box}\n\n`;
  text += `The /workspace changes of run ${run.id} (agent ${run.agent}, sandbox ${box}, started ${run.startedAt}).\n`;
  text += `Patch sha256: ${patch.sha256}\n${ledger}\n`;
  if (patch.staged) text += `Also ${patch.staged} changed or deleted binary file(s), from their exact bytes (not in the patch).\n`;
  if (patch.left.length) {
    text += `\nNot in this commit (a text patch cannot carry them):\n`;
    for (const l of patch.left) text += `  ${JSON.stringify(l.path)}: ${l.why}\n`;
  }
  return text;
}

export function registerRunExport(run: Command, client: () => Promise<AgentClient>): void {
  run
    .command('export')
    .description('write the run’s workspace changes as a patch file, or commit them on a new branch of a host git repository')
    .argument('<run>')
    .option('--patch <file>', 'write a unified patch that `git apply` takes')
    .option('--repo <dir>', 'a git repository on this machine (must be clean)')
    .option('--branch <name>', 'the new branch to create there, from its HEAD')
    .option('--json', 'print what was exported as JSON')
    .action((id: string, o: { patch?: string; repo?: string; branch?: string; json?: boolean }) =>
      runCommand(!!o.json, async () => {
        const [
          { parseWith },
          { RunExportOptionsSchema, RUN_EXPORTED_KIND },
          { gitPatch, needsBytes },
          gitExport,
          { fetchBytes },
          { diffDigest },
        ] = await Promise.all([
          import('../../../shared/contracts/parse.js'),
          import('../../../shared/types/run-export.js'),
          import('../git-patch.js'),
          import('../git-export.js'),
          import('../export-bytes.js'),
          import('../../engine/diff/diff-digest.js'),
        ]);
        const given = { patch: o.patch, repo: o.repo, branch: o.branch };
        const opts = parseWith(RunExportOptionsSchema, given, 'run export', 'e.g. warden run export RUN --repo . --branch agent/fix');
        // A bad target is refused before anything else happens.
        const target = opts.repo !== undefined ? gitExport.checkTarget(opts.repo, opts.branch!) : null;
        const api = await client();
        const detail = await api.request('run.get', { params: { run: id } });
        const diff = await api.request('run.diff', { params: { run: id } });
        // Files only their bytes can carry: new ones go in the patch as git binary patches; a branch also takes changed ones.
        const whole = diff.files.filter((f) => needsBytes(f) && (f.change === 'added' || (target !== null && f.change === 'modified')));
        const bytes = await fetchBytes(api, detail.sandboxId, whole);
        const patch = gitPatch(diff, `run ${detail.id} (agent ${detail.agent})`, bytes);
        // In a branch, what the patch left for bytes (a binary changed or deleted) is staged from them.
        const staged: ByteChange[] = [];
        if (target) {
          for (const l of patch.left.filter((x) => x.bytesOnly)) {
            const f = diff.files.find((x) => x.path === l.path)!;
            const got = bytes.get(f.path);
            if (f.change === 'added' || (f.change === 'modified' && !Buffer.isBuffer(got))) continue;
            const mode = (f.after ?? f.before)!.mode & 0o111 ? '100755' : '100644';
            staged.push({
              path: f.path,
              change: f.change,
              beforeSha256: f.before!.sha256!,
              bytes: Buffer.isBuffer(got) ? got : null,
              mode,
            });
          }
        }
        const leftOut = patch.left.filter((l) => !staged.some((s) => s.path === l.path));
        const ledger = await openLedger();
        try {
          const size = ledger.head().size;
          const checkpoint = ledger.checkpoints(1)[0];
          const where = `Ledger head: seq ${size}; latest signed checkpoint: ${checkpoint ? `size ${checkpoint.size} at ${checkpoint.time}` : 'none yet'}`;
          let to: RunExportedPayload['to'];
          if (target) {
            const message = commitMessage(detail, { sha256: patch.sha256, left: leftOut, staged: staged.length }, where);
            const commit = gitExport.commitPatch(target, opts.branch!, patch.text, message, staged);
            to = { kind: 'git', repo: target.top, branch: opts.branch!, commit };
          } else {
            const path = resolve(opts.patch!);
            writeFileSync(path, patch.text);
            to = { kind: 'patch', path };
          }
          const payload: RunExportedPayload = {
            runId: detail.id,
            agent: detail.agent,
            patchSha256: patch.sha256,
            diffSha256: diffDigest(diff),
            files: patch.included.length + staged.length,
            binary: patch.binary.length + staged.length,
            left: leftOut.length,
            to,
          };
          const [entry] = await ledger.appendBatchAsync([{ actor: 'user', sandboxId: detail.sandboxId, kind: RUN_EXPORTED_KIND, payload }]);
          printResult(!!o.json, { ...payload, leftOut, ledgerSeq: entry!.seq }, (r) => {
            let text = r.to.kind === 'git' ? `${r.to.commit}\n` : `wrote ${r.to.path}\n`;
            text += `${r.files} file(s), patch sha256 ${r.patchSha256.slice(0, 16)}…, ledger seq ${r.ledgerSeq}\n`;
            for (const l of r.leftOut) text += `not exported: ${JSON.stringify(l.path)} (${l.why})\n`;
            return text;
          });
        } finally {
          ledger.close();
        }
      }),
    );
}
