// Warden's errors as the E2B SDK expects to meet them: REST answers `{code, message}` with the HTTP
// status (401 becomes the SDK's AuthenticationError), envd answers a Connect error code (the SDK maps
// not_found, invalid_argument, unauthenticated … onto its own error classes). A refusal by policy
// says so in its message, so a caller of the SDK learns it was Warden's policy and why.
import { WardenError, type ErrorCode } from '../../../shared/errors.js';
import { isGatewayDenial } from '../../engine/gateway/denial.js';
import { errorResponse } from '../http-errors.js';

/** A part of the E2B API Warden does not implement: 501 / Connect `unimplemented`, never a silent no-op. */
export class E2bUnsupported extends WardenError {
  constructor(what: string, hint = 'see "Use Warden from E2B code" in README.md for what Warden supports') {
    super('E_BAD_INPUT', `${what} is not supported by Warden`, hint);
  }
}

/** What envd answers for a directory that is already there (the SDK's makeDir then returns false). */
export class E2bAlreadyExists extends WardenError {
  constructor(path: string) {
    super('E_CONFLICT', `${path} already exists`);
  }
}

export type ConnectCode =
  | 'invalid_argument'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'already_exists'
  | 'failed_precondition'
  | 'resource_exhausted'
  | 'deadline_exceeded'
  | 'unimplemented'
  | 'unavailable'
  | 'internal';

/** The HTTP status of a unary Connect error (connectrpc.com/docs/protocol, "Error codes"). */
export const CONNECT_STATUS: Record<ConnectCode, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  failed_precondition: 400,
  resource_exhausted: 429,
  deadline_exceeded: 504,
  unimplemented: 501,
  unavailable: 503,
  internal: 500,
};

const BY_CODE: Partial<Record<ErrorCode, ConnectCode>> = {
  E_BAD_INPUT: 'invalid_argument',
  E_UNAUTHORIZED: 'unauthenticated',
  E_POLICY_DENIED: 'permission_denied',
  E_NOT_FOUND: 'not_found',
  E_CONFLICT: 'failed_precondition',
  E_TOO_LARGE: 'resource_exhausted',
  E_TIMEOUT: 'deadline_exceeded',
  E_ENGINE_UNREACHABLE: 'unavailable',
};

export interface E2bFailure {
  status: number;
  connect: ConnectCode;
  message: string;
}

export function e2bFailure(err: unknown): E2bFailure {
  const { status, info } = errorResponse(err);
  const hint = info.hint ? ` (${info.hint})` : '';
  if (err instanceof E2bAlreadyExists) return { status: 409, connect: 'already_exists', message: info.message };
  if (err instanceof E2bUnsupported) return { status: 501, connect: 'unimplemented', message: `${info.message}${hint}` };
  // An open breaker is no rule against this call but a run failing too often: said apart, so the agent's
  // author looks at why its calls fail rather than at the policy (the message says when to retry). Not
  // `unavailable`: the SDK reads that as a sandbox no longer running.
  if (isGatewayDenial(err) && err.reason === 'breaker')
    return { status: 403, connect: 'permission_denied', message: `Warden's breaker is open: ${info.message}${hint}` };
  // Every other refusal of the gateway (policy, approvals, budgets) is Warden's policy speaking.
  if (isGatewayDenial(err) || info.code === 'E_POLICY_DENIED')
    return { status: status === 503 ? 403 : status, connect: 'permission_denied', message: `Warden policy: ${info.message}${hint}` };
  return { status, connect: BY_CODE[info.code] ?? 'internal', message: `${info.message}${hint}` };
}
