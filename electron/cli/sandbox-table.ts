// `warden sandbox ls` as a table; a sandbox Podman did not answer for is marked, its message and hint printed under it.
import type { SandboxInfo } from '../../shared/types/sandbox.js';
import { formatByteSize } from '../../shared/types/units.js';
import { alignColumns } from './text-table.js';

function uptime(info: SandboxInfo, now: number): string {
  if (!info.startedAt) return '-';
  const seconds = Math.max(0, Math.round((now - Date.parse(info.startedAt)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
}

/** The disk limit, marked when this host does not hold it. */
function diskCell(s: SandboxInfo): string {
  if (s.limits.diskBytes === null) return '-';
  return `${formatByteSize(s.limits.diskBytes)}${s.limits.diskEnforced ? '' : ' (not enforced)'}`;
}

export function formatSandboxTable(list: SandboxInfo[], now = Date.now()): string {
  if (list.length === 0) return 'No sandboxes. Create one with `warden sandbox create`.\n';
  const rows = [['NAME', 'STATE', 'IMAGE', 'RUNTIME', 'MEMORY', 'CPUS', 'PIDS', 'DISK', 'NETWORK', 'UP', 'ID']];
  for (const s of list) {
    rows.push([
      s.name,
      s.unreachable ? 'unreachable' : s.state,
      s.image,
      s.runtime,
      formatByteSize(s.limits.memoryBytes),
      String(s.limits.cpus),
      String(s.limits.pids),
      diskCell(s),
      s.network,
      uptime(s, now),
      s.id.slice(0, 12),
    ]);
  }
  // A wedged sandbox's row is as last seen: say why, and what to do, under the table.
  const notes = list.filter((s) => s.unreachable).map((s) => `${s.name}: ${s.unreachable!.message}\n  ${s.unreachable!.hint ?? ''}\n`);
  return alignColumns(rows) + (notes.length ? `\n${notes.join('')}` : '');
}
