// The shared error envelope over HTTP, with one status per stable code.
import type { FastifyReply } from 'fastify';
import { WardenError, toErrorInfo, type ErrorCode, type ErrorInfo } from '../../shared/errors.js';
import { isGatewayDenial } from '../engine/gateway/denial.js';

const STATUS: Record<ErrorCode, number> = {
  E_BAD_INPUT: 400,
  E_UNAUTHORIZED: 401,
  E_POLICY_DENIED: 403,
  E_NOT_FOUND: 404,
  E_CONFLICT: 409,
  E_TOO_LARGE: 413,
  E_IMAGE_MISSING: 400,
  E_RUNTIME_UNAVAILABLE: 400,
  E_TIMEOUT: 504,
  E_ENGINE: 502,
  E_ENGINE_UNREACHABLE: 503,
  E_LEDGER: 500,
  E_INTERNAL: 500,
};

/** Fastify's own errors (body parsing, limits) as our codes. */
function fromFastify(err: { code?: string; statusCode?: number; message: string }): WardenError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new WardenError(
        'E_TOO_LARGE',
        'the request body is larger than this endpoint accepts',
        'JSON bodies are at most 1 MiB; file uploads at most files.maxWriteBytes of the policy',
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new WardenError(
        'E_BAD_INPUT',
        'unsupported Content-Type',
        'send JSON with Content-Type: application/json (file uploads: application/octet-stream)',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new WardenError('E_BAD_INPUT', 'the JSON body is empty');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new WardenError('E_BAD_INPUT', 'the Content-Length does not match the body');
    default:
      if (err.statusCode === 400) return new WardenError('E_BAD_INPUT', `malformed request: ${err.message}`);
      if (err.statusCode === 413)
        return new WardenError(
          'E_TOO_LARGE',
          'the request body is too large',
          'JSON bodies are at most 1 MiB; file uploads at most files.maxWriteBytes of the policy',
        );
      return null;
  }
}

export function errorResponse(err: unknown): { status: number; info: ErrorInfo; retryAfterMs?: number } {
  const mapped = err instanceof WardenError ? err : (fromFastify(err as { code?: string; statusCode?: number; message: string }) ?? err);
  const info = toErrorInfo(mapped);
  if (info.code === 'E_INTERNAL') info.message = 'internal error'; // never leak internals to a caller
  const status = isGatewayDenial(mapped) ? mapped.status : (STATUS[info.code] ?? 500);
  const fastifyStatus = (err as { statusCode?: number }).statusCode;
  return {
    status: status === 400 && fastifyStatus === 415 ? 415 : status,
    info,
    ...(isGatewayDenial(mapped) && mapped.retryAfterMs ? { retryAfterMs: mapped.retryAfterMs } : {}),
  };
}

export function sendError(reply: FastifyReply, err: unknown): FastifyReply {
  const { status, info, retryAfterMs } = errorResponse(err);
  // The caller hears only "internal error"; the operator of serve must see what it was, or a 500
  // cannot be told apart from another (a red-team 500 on destroy could not be traced for this).
  if (info.code === 'E_INTERNAL' || info.code === 'E_LEDGER') logInternal(reply, err);
  if (retryAfterMs) void reply.header('retry-after', String(Math.ceil(retryAfterMs / 1000)));
  if (status === 401) void reply.header('www-authenticate', 'Bearer realm="warden"');
  return reply.code(status).type('application/json; charset=utf-8').send({ error: info });
}

/**
 * Errors Node's HTTP parser raises before a request exists (headers too large, malformed request,
 * a client too slow to send its headers), answered in the same envelope as every other error.
 */
export function clientErrorAnswer(err: { code?: string }): string {
  const [status, reason, info] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          toErrorInfo(
            new WardenError(
              'E_TOO_LARGE',
              'the request headers are larger than this server accepts',
              'send a shorter request: headers are at most 16 KiB in all',
            ),
          ),
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', toErrorInfo(new WardenError('E_TIMEOUT', 'the request did not arrive in time'))]
        : [400, 'Bad Request', toErrorInfo(new WardenError('E_BAD_INPUT', 'malformed HTTP request'))];
  const body = JSON.stringify({ error: info });
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`;
}

function logInternal(reply: FastifyReply, err: unknown): void {
  const where = `${reply.request.method} ${reply.request.url.split('?')[0]}`;
  const what = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`warden: internal error answering ${where}: ${what}\n`);
}
