import { join } from 'node:path';
import { wardenHome } from '../paths.js';

/** WARDEN_HOME/ledger.db */
export function defaultLedgerFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(wardenHome(env), 'ledger.db');
}

/** WARDEN_HOME/keys: the Ed25519 key pair; never mounted into a sandbox. */
export function defaultKeyDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(wardenHome(env), 'keys');
}
