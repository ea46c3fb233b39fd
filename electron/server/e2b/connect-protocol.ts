// The Connect protocol (connectrpc.com/docs/protocol), JSON codec only, as the e2b SDK speaks it to
// envd: a unary call is a POST of one JSON message answered by one (an error: HTTP status and
// {code,message}); a server-streaming call sends one enveloped message (flags byte, big-endian
// length, JSON) and is answered 200 with enveloped messages, the last one (flag 0x02) carrying the
// error if any. The envelope is parsed as hostile input: its length must match what arrived.
import type { FastifyReply } from 'fastify';
import { WardenError } from '../../../shared/errors.js';
import { ByteBatcher } from '../../engine/output-batcher.js';
import { BoundedResponse } from '../ndjson.js';
import type { StreamMeter } from '../stream-meter.js';
import { e2bFailure } from './e2b-errors.js';

const FLAG_END_STREAM = 0x02;
const FLAG_COMPRESSED = 0x01;
export const CONNECT_STREAM_TYPE = 'application/connect+json';

function envelope(flags: number, message: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(message), 'utf8');
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

/** The one message of a server-streaming request. */
export function readEnvelopedRequest(body: unknown): unknown {
  if (!Buffer.isBuffer(body) || body.length < 5) throw new WardenError('E_BAD_INPUT', 'a streaming call sends one enveloped message');
  const flags = body.readUInt8(0);
  const length = body.readUInt32BE(1);
  if (flags & FLAG_COMPRESSED)
    throw new WardenError('E_BAD_INPUT', 'compressed messages are not accepted', 'send Connect-Content-Encoding: identity');
  if (length !== body.length - 5) throw new WardenError('E_BAD_INPUT', 'the enveloped message is not as long as its header says');
  try {
    return JSON.parse(body.subarray(5).toString('utf8')) as unknown;
  } catch {
    throw new WardenError('E_BAD_INPUT', 'the message is not JSON');
  }
}

/** The body of a unary error answer. */
export function connectErrorBody(err: unknown): { status: number; body: { code: string; message: string } } {
  const f = e2bFailure(err);
  return { status: f.connect === 'permission_denied' ? 403 : f.status, body: { code: f.connect, message: f.message } };
}

/** A streaming call's error before its stream began: still 200, the error in the end message (HTTP errors lose it). */
export function connectStreamError(err: unknown): Buffer {
  return envelope(FLAG_END_STREAM, { error: connectErrorBody(err).body });
}

/**
 * One server-streaming answer: headers at once (the SDK waits for its first message, the process's
 * start, while Warden decides), then messages, then the end. Output bytes are batched and bounded
 * like the agent API's exec stream; a client that hangs up aborts `gone`.
 */
export class ConnectStream {
  private readonly queue: BoundedResponse;
  private ended = false;

  constructor(reply: FastifyReply, meter?: StreamMeter) {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': CONNECT_STREAM_TYPE, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    res.flushHeaders();
    this.queue = new BoundedResponse(res, meter);
  }

  get gone(): AbortSignal {
    return this.queue.gone;
  }

  get congested(): boolean {
    return this.queue.congested;
  }

  drained = (): Promise<void> => this.queue.drained();

  send(message: unknown): boolean {
    if (this.ended) return false;
    return this.queue.writeLine(envelope(0, message));
  }

  /** A batcher of one output stream, each batch sent as the message `wrap` makes of it. */
  batcher(wrap: (data: Buffer) => unknown): ByteBatcher {
    return new ByteBatcher((data) => this.send(wrap(data)));
  }

  /** The end of the stream: clean, or with the error the client will raise. */
  end(err?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const error = err === undefined ? undefined : connectErrorBody(err).body;
    this.queue.writeLine(envelope(FLAG_END_STREAM, error ? { error } : {}));
    this.queue.end();
  }
}
