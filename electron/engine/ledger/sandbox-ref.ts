// A sandbox as a person names it, turned into the id its ledger entries carry. People know their
// sandboxes by name; entries are filed by container id. Names come from the ledger's own
// sandbox.created entries, so a sandbox that is gone still resolves. A name or prefix that matches
// nothing is an error that says so (an export of nothing looks like a clean record, and is not);
// one that matches several sandboxes names them instead of picking one.
import { WardenError } from '../../../shared/errors.js';
import type { Ledger } from './ledger.js';

/** Shortest id prefix taken as a prefix (what `podman ps` shows is 12). */
const MIN_PREFIX = 4;
const PAGE = 10_000;

interface Created {
  id: string;
  name: string | null;
  time: string;
}

/** Every sandbox.created entry: id, the name it was given, when. */
function createdSandboxes(ledger: Ledger): Created[] {
  const out: Created[] = [];
  for (let fromSeq = 1; ;) {
    const page = ledger.entries({ kind: 'sandbox.created', fromSeq, limit: PAGE });
    for (const e of page) {
      if (e.sandboxId === null) continue;
      const name = (e.payload as { name?: unknown } | null)?.name;
      out.push({ id: e.sandboxId, name: typeof name === 'string' ? name : null, time: e.time });
    }
    if (page.length < PAGE) return out;
    fromSeq = page.at(-1)!.seq + 1;
  }
}

function oneOf(ref: string, found: Created[], how: string): string | null {
  const ids = [...new Map(found.map((c) => [c.id, c])).values()];
  if (ids.length === 0) return null;
  if (ids.length === 1) return ids[0]!.id;
  throw new WardenError(
    'E_CONFLICT',
    `"${ref}" ${how} ${ids.length} sandboxes: ${ids.map((c) => `${c.id.slice(0, 12)} (created ${c.time})`).join(', ')}`,
    'pass the id of the one you mean',
  );
}

/** The sandbox id `ref` names in this ledger: an id with entries, a name given at create, or an id prefix. */
export function resolveSandboxRef(ledger: Ledger, ref: string): string {
  if (ledger.entries({ sandboxId: ref, limit: 1 }).length > 0) return ref;
  const created = createdSandboxes(ledger);
  const named = created.filter((c) => c.name === ref);
  const prefixed = ref.length >= MIN_PREFIX ? created.filter((c) => c.id.startsWith(ref)) : [];
  // Names are picked by whoever creates (an agent too): a name that is another sandbox's short id must
  // not stand in for that sandbox, so a ref that is both names every sandbox it matches instead.
  const how =
    named.length && prefixed.length ? 'is the name of or begins the ids of' : named.length ? 'is the name of' : 'begins the ids of';
  const found = oneOf(ref, [...named, ...prefixed], how);
  if (found) return found;
  throw new WardenError(
    'E_NOT_FOUND',
    `no sandbox "${ref}" in the ledger: no entries carry that id, and no sandbox was created with that name or an id that begins so`,
    'list the sandboxes the ledger knows with `warden audit log --kind sandbox.created`',
  );
}
