// How a browser becomes a UI session: a one-time login code (printed by `warden serve` inside a
// link) or the long-lived UI token in WARDEN_HOME/ui-token is posted once and exchanged for an
// HttpOnly, SameSite=Strict cookie. The code never stays in the address bar, and is gone once used.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SESSION_COOKIE = 'warden_ui';
const CODE_TTL_MS = 15 * 60 * 1000;
const SESSION_TTL_MS = 12 * 3600 * 1000;
const MAX_FAILURES_PER_MINUTE = 20;

function token(): string {
  return randomBytes(32).toString('base64url');
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The UI token: made once, 0600, reusable (paste it into the login form). */
export function uiToken(home: string): string {
  const path = join(home, 'ui-token');
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8').trim();
    if (text.length >= 32) return text;
  }
  const fresh = token();
  writeFileSync(path, `${fresh}\n`, { mode: 0o600 });
  return fresh;
}

export class WebShellLogin {
  private readonly codes = new Map<string, number>();
  private readonly sessions = new Map<string, number>();
  private failures: number[] = [];

  constructor(private readonly token: string) {}

  /** A fresh one-time code for a login link. */
  issueCode(now = Date.now()): string {
    const code = token();
    this.codes.set(code, now + CODE_TTL_MS);
    return code;
  }

  /** Exchanges a code or the UI token for a session id; null when it is not valid (or too many tries). */
  exchange(presented: unknown, now = Date.now()): string | null {
    this.failures = this.failures.filter((t) => t > now - 60_000);
    if (this.failures.length >= MAX_FAILURES_PER_MINUTE || typeof presented !== 'string' || presented.length > 256) return this.fail(now);
    let ok = same(presented, this.token);
    for (const [code, expires] of this.codes) {
      if (expires < now) this.codes.delete(code);
      else if (same(presented, code)) {
        this.codes.delete(code);
        ok = true;
      }
    }
    if (!ok) return this.fail(now);
    const session = token();
    this.sessions.set(session, now + SESSION_TTL_MS);
    return session;
  }

  private fail(now: number): null {
    this.failures.push(now);
    return null;
  }

  /** The session named by the request's cookie header, if it is live. */
  check(cookieHeader: string | undefined, now = Date.now()): boolean {
    const id = readCookie(cookieHeader, SESSION_COOKIE);
    if (!id) return false;
    const expires = this.sessions.get(id);
    if (expires === undefined) return false;
    if (expires < now) {
      this.sessions.delete(id);
      return false;
    }
    return true;
  }

  end(cookieHeader: string | undefined): void {
    const id = readCookie(cookieHeader, SESSION_COOKIE);
    if (id) this.sessions.delete(id);
  }
}

export function readCookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export function sessionCookie(id: string): string {
  return `${SESSION_COOKIE}=${id}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=${SESSION_TTL_MS / 1000}`;
}
