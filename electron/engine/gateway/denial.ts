// Why the gateway stopped a call, with the HTTP status a door should use and when to retry.
import { WardenError, type ErrorCode } from '../../../shared/errors.js';
import type { DenyReason } from '../../../shared/types/run.js';

export class GatewayDenial extends WardenError {
  constructor(
    readonly reason: DenyReason,
    message: string,
    hint?: string,
    readonly retryAfterMs?: number,
    code: ErrorCode = 'E_POLICY_DENIED',
  ) {
    super(code, message, hint);
  }

  /** 503 for a breaker that will let a probe through later; 400 for a malformed ask; else 403. */
  get status(): number {
    if (this.reason === 'breaker') return 503;
    return this.code === 'E_BAD_INPUT' ? 400 : 403;
  }
}

export function isGatewayDenial(err: unknown): err is GatewayDenial {
  return err instanceof GatewayDenial;
}
