// The policy as the home's file says it now. A long-lived Warden (the app, `warden serve`) looks at
// the file (which of policy.yaml/.yml/.json exists, its inode, size and mtime: one stat each) when
// its policy is read, and reads it again when that changed, so an edit — a tightened egress rule, a
// new deny — applies to the next call and the next connection without a restart. A file that no
// longer parses is never half-used: the last good policy stays in force, and the error is kept
// (and said once on stderr) until the file is fixed.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Policy } from '../../../shared/types/policy.js';
import { loadPolicy, POLICY_FILES } from './policy-load.js';

/** Which file, and which version of it: changes whenever an edit, a replace or a removal does. */
function versionOf(home: string): string {
  for (const name of POLICY_FILES) {
    const st = statSync(join(home, name), { throwIfNoEntry: false });
    if (st) return `${name}:${st.ino}:${st.size}:${st.mtimeMs}`;
  }
  return 'default';
}

export class PolicyFile {
  private version: string;
  private current: Policy;
  private where: string;
  /** Why the file in the home is not the policy in force (it does not parse); null when it is. */
  error: string | null = null;

  /** @param home followed when given; null: `initial` is the policy for good (a caller gave it). */
  constructor(
    private readonly home: string | null,
    initial: Policy,
    source: string | null,
  ) {
    this.current = initial;
    this.where = source ?? 'given';
    this.version = home ? versionOf(home) : '';
  }

  get policy(): Policy {
    if (!this.home) return this.current;
    const version = versionOf(this.home);
    if (version === this.version) return this.current;
    this.version = version;
    try {
      const loaded = loadPolicy(this.home);
      this.current = loaded.policy;
      this.where = loaded.source;
      this.error = null;
    } catch (err) {
      this.error = (err as Error).message;
      process.stderr.write(`warden: the policy file was changed but is not used (the last good policy stays): ${this.error}\n`);
    }
    return this.current;
  }

  /** Replaces the policy in force (a caller's own; the file takes over again at its next change). */
  set policy(p: Policy) {
    this.current = p;
  }

  get source(): string {
    return this.where;
  }
}
