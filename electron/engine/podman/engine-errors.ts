// Dockerode/modem failures → WardenError with a code and a message a person can act on.
import { WardenError } from '../../../shared/errors.js';

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'EPIPE', 'ECONNRESET', 'EACCES', 'ETIMEDOUT']);

interface ModemError {
  code?: string;
  statusCode?: number;
  reason?: string;
  message?: string;
  json?: { message?: string; cause?: string } | null;
}

export function isUnreachableError(err: unknown): boolean {
  const e = err as ModemError | null;
  if (!e || typeof e !== 'object') return false;
  if (e.code && UNREACHABLE_CODES.has(e.code)) return true;
  return typeof e.message === 'string' && /socket hang up|connect ENOENT|connect ECONNREFUSED/.test(e.message);
}

export function engineMessage(err: unknown): string {
  const e = err as ModemError;
  return e?.json?.message || e?.reason || e?.message || String(err);
}

/**
 * `ownLog`: the log of a Podman service Warden started itself, which it also starts again on its
 * own; the person is then not told to start one by hand (red team, stop 23), only where to look.
 */
export function unreachable(socketPath: string, ownLog?: string): WardenError {
  return new WardenError(
    'E_ENGINE_UNREACHABLE',
    `the Podman engine is not answering at ${socketPath}`,
    ownLog
      ? `Warden started this Podman service and is starting it again; try again in a moment, and if it keeps failing see ${ownLog} and \`warden doctor\``
      : 'start it (`podman system service --time=0 &` or `systemctl start podman.socket`); Warden reconnects by itself',
  );
}

/** Maps an engine error; `what` names the thing asked for, for 404s ("sandbox web-1"). */
export function mapEngineError(err: unknown, what: string, socketPath: string, ownLog?: string): WardenError {
  if (err instanceof WardenError) return err;
  if (isUnreachableError(err)) return unreachable(socketPath, ownLog);
  const e = err as ModemError;
  const message = engineMessage(err);
  switch (e?.statusCode) {
    case 404:
      return new WardenError('E_NOT_FOUND', `${what} was not found`, 'list sandboxes with `warden sandbox ls`');
    case 409:
      return new WardenError('E_CONFLICT', `${what}: ${message}`);
    case 400:
      return new WardenError('E_BAD_INPUT', `${what}: ${message}`);
    default:
      return new WardenError('E_ENGINE', `${what}: ${message}`);
  }
}
