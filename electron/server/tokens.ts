// Agent and user tokens. Only SHA-256 digests are stored (tokens.json, 0600 in WARDEN_HOME); a token
// is shown once, when created. The user's own token (for the CLI and the app's web shell) is also
// kept in user.token (0600) so local commands can reach a running server. Lookups compare digests
// in constant time against every stored token; the file is re-read when another process changes it
// (`warden token revoke` while a server runs). A reload that finds tokens revoked emits "revoked",
// and watch() reloads as soon as the file changes, so a server can end those tokens' streams.
import { EventEmitter } from 'node:events';
import { watch as watchDir } from 'node:fs';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WardenError } from '../../shared/errors.js';
import type { TokenInfo } from '../../shared/types/api.js';
import { AGENT_NAME_PATTERN } from '../../shared/types/agent-name.js';

interface StoredToken extends Omit<TokenInfo, 'lastUsedAt'> {
  sha256: string;
}

interface TokenFile {
  version: 1;
  tokens: StoredToken[];
}

const TOKEN_PREFIX = 'wdn_';
export const USER_AGENT_NAME = 'user';

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export class TokenStore extends EventEmitter<{ revoked: [string[]] }> {
  private readonly file: string;
  private readonly userFile: string;
  private tokens: StoredToken[] = [];
  private digests: Buffer[] = [];
  /** What the file looked like when last read: each save is a new file (a rename), so its inode tells two saves in one clock tick apart. */
  private seen = '';
  private readonly lastUsed = new Map<string, string>();

  constructor(readonly home: string) {
    super();
    this.file = join(home, 'tokens.json');
    this.userFile = join(home, 'user.token');
    this.reload();
  }

  private reload(): void {
    let version: string;
    try {
      const st = statSync(this.file);
      version = `${st.ino}:${st.mtimeMs}:${st.size}`;
    } catch {
      version = 'absent';
    }
    if (version === this.seen) return;
    this.seen = version;
    const active = new Set(this.tokens.flatMap((t) => (t.revokedAt === null ? [t.id] : [])));
    if (version === 'absent') {
      this.tokens = [];
    } else {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as TokenFile;
      this.tokens = parsed.tokens ?? [];
    }
    this.digests = this.tokens.map((t) => Buffer.from(t.sha256, 'hex'));
    const stillActive = new Set(this.tokens.flatMap((t) => (t.revokedAt === null ? [t.id] : [])));
    const revoked = [...active].filter((id) => !stillActive.has(id));
    if (revoked.length > 0) this.emit('revoked', revoked);
  }

  /** Reloads whenever tokens.json changes (another process revoking); returns how to stop. */
  watch(): () => void {
    // The file is replaced by a rename, so its directory is what is watched.
    const watcher = watchDir(this.home, { persistent: false }, (_event, name) => {
      if (name === null || name === 'tokens.json') this.reloadQuietly();
    });
    watcher.on('error', () => undefined);
    return () => watcher.close();
  }

  private reloadQuietly(): void {
    try {
      this.reload();
    } catch {
      // a half-written or removed file is read again on the next change or request
    }
  }

  private save(): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version: 1, tokens: this.tokens } satisfies TokenFile, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
    this.seen = '';
    this.reload();
  }

  create(agent: string, role: 'agent' | 'user' = 'agent'): { info: TokenInfo; token: string } {
    if (!AGENT_NAME_PATTERN.test(agent))
      throw new WardenError('E_BAD_INPUT', `"${agent}" is not an agent name: letters, digits, _ . - (at most 63)`);
    if (role === 'agent' && agent === USER_AGENT_NAME)
      throw new WardenError('E_BAD_INPUT', `"${USER_AGENT_NAME}" is reserved for the user's own token`);
    this.reload();
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const stored: StoredToken = {
      id: `tok_${randomBytes(6).toString('hex')}`,
      agent,
      role,
      sha256: digest(token).toString('hex'),
      createdAt: new Date().toISOString(),
      revokedAt: null,
    };
    this.tokens.push(stored);
    this.save();
    return { info: this.public(stored), token };
  }

  /** The user's token, created on first use and kept in user.token (0600). */
  userToken(): string {
    this.reload();
    if (existsSync(this.userFile)) {
      const token = readFileSync(this.userFile, 'utf8').trim();
      const known = this.verify(token);
      if (known && known.role === 'user') return token;
    }
    const { token } = this.create(USER_AGENT_NAME, 'user');
    writeFileSync(this.userFile, `${token}\n`, { mode: 0o600 });
    chmodSync(this.userFile, 0o600);
    return token;
  }

  /** Revokes by token id or by agent name (all of that agent's tokens); returns how many. */
  revoke(idOrAgent: string): number {
    this.reload();
    const ids: string[] = [];
    const now = new Date().toISOString();
    for (const t of this.tokens) {
      if (t.revokedAt === null && (t.id === idOrAgent || (t.agent === idOrAgent && t.role === 'agent'))) {
        t.revokedAt = now;
        ids.push(t.id);
      }
    }
    if (ids.length === 0)
      throw new WardenError('E_NOT_FOUND', `no active token with id or agent ${idOrAgent}`, 'list them with `warden token ls`');
    this.save();
    // The reload that follows the file's change finds nothing new in this process: its listeners hear it here.
    this.emit('revoked', ids);
    return ids.length;
  }

  list(): TokenInfo[] {
    this.reload();
    return this.tokens.map((t) => this.public(t));
  }

  /** The token's owner, or null. Compares against every stored digest, without an early exit. */
  verify(token: string | undefined): TokenInfo | null {
    if (!token || token.length > 256) return null;
    this.reload();
    const d = digest(token);
    let found = -1;
    for (let i = 0; i < this.digests.length; i++) {
      if (timingSafeEqual(d, this.digests[i]!) && found < 0) found = i;
    }
    const t = found >= 0 ? this.tokens[found]! : null;
    if (!t || t.revokedAt !== null) return null;
    this.lastUsed.set(t.id, new Date().toISOString());
    return this.public(t);
  }

  private public(t: StoredToken): TokenInfo {
    return {
      id: t.id,
      agent: t.agent,
      role: t.role,
      createdAt: t.createdAt,
      revokedAt: t.revokedAt,
      lastUsedAt: this.lastUsed.get(t.id) ?? null,
    };
  }
}
