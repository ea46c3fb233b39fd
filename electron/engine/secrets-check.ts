// `warden doctor`'s word on who can read Warden's own secrets. The user's token (user.token) and the
// UI token (ui-token) approve asks and drive every sandbox: any process of the OS user that owns
// WARDEN_HOME can read them, an agent run as that user included, and so approve its own asks. Warden
// cannot see which user an agent will run as, so it says what it can tell: whether the files are
// readable beyond their owner (a fault to fix), and, always, that agents belong under another user.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { DoctorCheck } from '../../shared/types/engine.js';

const SECRETS = ['user.token', 'ui-token', 'tokens.json'];
/** Not secrets, but every agent's commands and output previews: for its owner only too. */
const PRIVATE = ['ledger.db', 'ledger.db-wal', 'ledger.db-shm'];

export function secretsCheck(home: string, stat = (p: string) => statSync(p)): DoctorCheck {
  const name = 'agent separation';
  const open: string[] = [];
  let owner: number | null = null;
  for (const file of [...SECRETS, ...PRIVATE]) {
    try {
      const st = stat(join(home, file));
      owner = st.uid;
      if (st.mode & 0o077) open.push(`${file} (mode ${(st.mode & 0o777).toString(8)})`);
    } catch {
      /* not made yet: nothing to leak */
    }
  }
  try {
    const st = stat(home);
    owner = st.uid;
    // Others may pass through the home (0711: a sandbox's disk under disks/ must be reachable for
    // its user namespace), but not list it or write to it.
    if (st.mode & 0o066) open.push(`${home} (mode ${(st.mode & 0o777).toString(8)})`);
  } catch {
    /* the data directory check reports this */
  }
  if (open.length) {
    return {
      name,
      ok: false,
      detail: `readable beyond its owner: ${open.join(', ')}; any local user could take the user's token and approve agents' asks`,
      fix: `chmod go-rw ${home} && chmod 600 ${[...SECRETS, ...PRIVATE].map((f) => join(home, f)).join(' ')}`,
    };
  }
  const who = owner === null ? 'the user that runs Warden' : `uid ${owner}`;
  return {
    name,
    ok: true,
    detail: `secrets are ${who}'s alone; an agent running as ${who} could still read user.token and approve its own asks: run agents as another user (e.g. \`sudo -u agent env WARDEN_TOKEN=wdn_… claude\`), with only their own token`,
  };
}
