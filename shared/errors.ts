// The one error shape that crosses every boundary (IPC, HTTP, WebSocket, CLI --json).
// `code` is stable and machine-readable; `message` is for a person; `hint` says what to do.

export const ERROR_CODES = [
  'E_BAD_INPUT',
  'E_NOT_FOUND',
  'E_CONFLICT',
  'E_ENGINE_UNREACHABLE',
  'E_ENGINE',
  'E_IMAGE_MISSING',
  'E_RUNTIME_UNAVAILABLE',
  'E_TIMEOUT',
  'E_POLICY_DENIED',
  'E_UNAUTHORIZED',
  'E_TOO_LARGE',
  'E_LEDGER',
  'E_INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  hint?: string;
}

export type Envelope<T> = { result: T } | { error: ErrorInfo };

export class WardenError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;

  constructor(code: ErrorCode, message: string, hint?: string) {
    super(message);
    this.name = 'WardenError';
    this.code = code;
    if (hint !== undefined) this.hint = hint;
  }

  toInfo(): ErrorInfo {
    return this.hint === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, hint: this.hint };
  }
}

export function isWardenError(err: unknown): err is WardenError {
  return err instanceof WardenError;
}

/** Turns anything thrown into the envelope's error part; unknown errors become E_INTERNAL without a stack. */
export function toErrorInfo(err: unknown): ErrorInfo {
  if (err instanceof WardenError) return err.toInfo();
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'E_INTERNAL', message };
}

export function fromErrorInfo(info: ErrorInfo): WardenError {
  return new WardenError(info.code, info.message, info.hint);
}
