// Inspect answers applied to the sandbox rows, never over something newer. Answers can pass each
// other and an action's result (a busy Podman, a start clicked while a stop's event was being
// looked up): one that finds its row rewritten since it was asked may be older than the row, so it
// is asked again rather than applied over it (a row once stayed "exited" under a started sandbox).
import { isWardenError } from '../../../shared/errors.js';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';

export interface InspectRows {
  ask(id: string): Promise<SandboxInfo>;
  row(id: string): SandboxInfo | undefined;
  put(info: SandboxInfo): void;
  remove(id: string): void;
}

/** How often an answer overtaken by a newer write is asked again before it is applied anyway. */
export const STALE_ASKS = 3;

export function inspectInto(rows: InspectRows, id: string, asksLeft = STALE_ASKS): Promise<void> {
  const asked = rows.row(id);
  return rows.ask(id).then(
    (info) => {
      if (rows.row(id) !== asked && asksLeft > 0) return inspectInto(rows, id, asksLeft - 1);
      rows.put(info);
    },
    (err: unknown) => {
      // The engine answers only for sandboxes Warden made; other containers are E_NOT_FOUND.
      if (isWardenError(err) && err.code === 'E_NOT_FOUND') rows.remove(id);
      // Podman did not answer for it (wedged): its row stays as last seen, marked, with what to do.
      const row = rows.row(id);
      if (isWardenError(err) && err.code === 'E_TIMEOUT' && row) rows.put({ ...row, unreachable: err.toInfo() });
    },
  );
}
