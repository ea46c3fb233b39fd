// File read, write and list through the sandbox's runner, answered as the python helper answers
// (podman/file-helper.ts): the bytes, or a WardenError with the helper's code and message. The
// runner is untrusted, so what it returns is bounded here (a read by its limit, a list by its entry
// count) and a refusal may only carry one of the file API's own codes.
import { WardenError } from '../../../shared/errors.js';
import { HostFrame, RUNNER_MAX_PAYLOAD, RunnerFrame } from '../../../shared/contracts/runner.js';
import {
  encodeFileOp,
  encodeFrame,
  LIST_ENTRY_MAX_BYTES,
  parseFail,
  parseListEntries,
  RunnerProtocolError,
  type Frame,
  type ListedEntry,
} from './frame-codec.js';
import type { RunnerChannel } from './runner-channel.js';

/** As the helper's exec timeout: a file call unanswered this long means the runner is stuck. */
const FILE_ANSWER_MS = 60_000;

function fileCall<T>(
  channel: RunnerChannel,
  type: number,
  limit: number,
  comps: string[],
  maxBytes: number,
  parse: (bytes: Buffer) => T,
  data?: Buffer,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let id = 0;
    const watch = setTimeout(() => channel.lose(`it did not answer a file call within ${FILE_ANSWER_MS / 1000}s`), FILE_ANSWER_MS);
    const finish = () => {
      clearTimeout(watch);
      channel.end(id);
    };
    try {
      id = channel.begin({
        onFrame: (frame: Frame) => {
          if (frame.type === RunnerFrame.stdout) {
            bytes += frame.payload.length;
            if (bytes > maxBytes) throw new RunnerProtocolError('more file bytes than asked for');
            chunks.push(frame.payload);
          } else if (frame.type === RunnerFrame.done) {
            if (frame.payload.length) throw new RunnerProtocolError('a DONE frame with a payload');
            // Parsed before the call ends, so a malformed answer loses the runner like any bad frame.
            const value = parse(Buffer.concat(chunks));
            finish();
            resolve(value);
          } else if (frame.type === RunnerFrame.fail) {
            const fail = parseFail(frame.payload);
            finish();
            reject(new WardenError(fail.code, fail.message));
          } else throw new RunnerProtocolError(`frame type 0x${frame.type.toString(16)} in a file call`);
        },
        onLost: (error) => {
          finish();
          reject(error);
        },
      });
    } catch (err) {
      clearTimeout(watch);
      reject(err as Error);
      return;
    }
    channel.send(encodeFileOp(type, id, limit, comps));
    if (data) {
      for (let off = 0; off < data.length; off += RUNNER_MAX_PAYLOAD) {
        channel.send(encodeFrame(HostFrame.stdin, id, data.subarray(off, off + RUNNER_MAX_PAYLOAD)));
      }
      channel.send(encodeFrame(HostFrame.stdin, id));
    }
  });
}

export function readThroughRunner(channel: RunnerChannel, comps: string[], maxBytes: number): Promise<Buffer> {
  return fileCall(channel, HostFrame.read, maxBytes, comps, maxBytes, (b) => b);
}

export async function writeThroughRunner(channel: RunnerChannel, comps: string[], data: Buffer): Promise<void> {
  await fileCall(channel, HostFrame.write, data.length, comps, 0, () => undefined, data);
}

export function listThroughRunner(channel: RunnerChannel, comps: string[], maxEntries: number): Promise<ListedEntry[]> {
  return fileCall(channel, HostFrame.list, maxEntries, comps, maxEntries * LIST_ENTRY_MAX_BYTES, (b) => parseListEntries(b, maxEntries));
}
