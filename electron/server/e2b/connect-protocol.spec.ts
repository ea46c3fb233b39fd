// The Connect envelope read as hostile input, and Warden's errors as the codes the e2b SDK maps.
import { describe, expect, it } from 'vitest';
import { WardenError } from '../../../shared/errors.js';
import { GatewayDenial } from '../../engine/gateway/denial.js';
import { connectErrorBody, connectStreamError, readEnvelopedRequest } from './connect-protocol.js';
import { E2bUnsupported, e2bFailure } from './e2b-errors.js';
import { keepaliveMs } from './envd-process.js';

function frame(flags: number, payload: string, length = Buffer.byteLength(payload)): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(length, 1);
  return Buffer.concat([head, Buffer.from(payload)]);
}

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as WardenError).code;
  }
  return 'ok';
};

describe('readEnvelopedRequest', () => {
  it('reads one JSON message', () => {
    expect(readEnvelopedRequest(frame(0, '{"process":{"cmd":"ls"}}'))).toEqual({ process: { cmd: 'ls' } });
  });

  it('refuses what is not exactly one whole uncompressed JSON message', () => {
    expect(codeOf(() => readEnvelopedRequest(undefined))).toBe('E_BAD_INPUT');
    expect(codeOf(() => readEnvelopedRequest(Buffer.from([0, 0, 0])))).toBe('E_BAD_INPUT');
    expect(codeOf(() => readEnvelopedRequest(frame(0, '{}', 99)))).toBe('E_BAD_INPUT');
    expect(codeOf(() => readEnvelopedRequest(frame(0, '{}', 1)))).toBe('E_BAD_INPUT');
    expect(codeOf(() => readEnvelopedRequest(frame(1, '{}')))).toBe('E_BAD_INPUT');
    expect(codeOf(() => readEnvelopedRequest(frame(0, '{nope')))).toBe('E_BAD_INPUT');
  });
});

describe('errors for the SDK', () => {
  it('says a refusal was Warden policy, and maps codes the SDK knows', () => {
    const denied = e2bFailure(new GatewayDenial('policy', 'touch is denied'));
    expect(denied).toMatchObject({ status: 403, connect: 'permission_denied' });
    expect(denied.message).toMatch(/^Warden policy: touch is denied/);
    expect(e2bFailure(new WardenError('E_NOT_FOUND', 'gone'))).toMatchObject({ status: 404, connect: 'not_found' });
    expect(e2bFailure(new WardenError('E_UNAUTHORIZED', 'who'))).toMatchObject({ status: 401, connect: 'unauthenticated' });
    expect(e2bFailure(new E2bUnsupported('pause'))).toMatchObject({ status: 501, connect: 'unimplemented' });
    expect(e2bFailure(new Error('secret internals')).message).toBe('internal error');
  });

  it('puts a streaming call’s error in its end message', () => {
    const end = connectStreamError(new E2bUnsupported('a PTY'));
    expect(end.readUInt8(0)).toBe(2);
    expect(JSON.parse(end.subarray(5).toString())).toEqual({ error: connectErrorBody(new E2bUnsupported('a PTY')).body });
    expect(connectErrorBody(new E2bUnsupported('a PTY')).body.message).toContain('a PTY is not supported by Warden');
  });
});

describe('keepaliveMs', () => {
  it('takes the interval the client asks for, within bounds, and 50 s when it asks for none or nonsense', () => {
    expect(keepaliveMs('50')).toBe(50_000);
    expect(keepaliveMs(undefined)).toBe(50_000);
    expect(keepaliveMs('abc')).toBe(50_000);
    expect(keepaliveMs('0')).toBe(50_000);
    expect(keepaliveMs('1')).toBe(5_000);
    expect(keepaliveMs('100000')).toBe(300_000);
  });
});
