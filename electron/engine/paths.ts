import { homedir } from 'node:os';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';

/** The data directory: WARDEN_HOME, else $XDG_DATA_HOME/warden, else ~/.local/share/warden. */
export function wardenHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WARDEN_HOME) return env.WARDEN_HOME;
  const xdg = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(xdg, 'warden');
}

/** Creates the data directory (owner-only) if needed and returns it. */
export function ensureWardenHome(env: NodeJS.ProcessEnv = process.env): string {
  const dir = wardenHome(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
