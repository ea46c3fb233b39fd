// Content-addressed blobs: output, transcripts, file contents too large for an entry. The entry holds
// the SHA-256 digest and size; the bytes live in blobs/ab/abcdef…, written whole (temp + fsync +
// rename) so a digest that an entry names is never a torn file.
import { hash as digest } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir } from './fsync-dir.js';
import { WardenError } from '../../../shared/errors.js';
import { HEX32_PATTERN } from '../../../shared/types/ledger.js';

export interface BlobRef {
  digest: string;
  size: number;
  /** The first characters as text (invalid UTF-8 shown as U+FFFD). */
  preview: string;
  truncated: boolean;
}

export class BlobStore {
  constructor(private readonly dir: string) {}

  private pathOf(hex: string): string {
    return join(this.dir, hex.slice(0, 2), hex);
  }

  put(bytes: Uint8Array): { digest: string; size: number } {
    const hex = digest('sha256', bytes);
    const file = this.pathOf(hex);
    if (!existsSync(file)) {
      const sub = join(this.dir, hex.slice(0, 2));
      mkdirSync(sub, { recursive: true, mode: 0o700 });
      const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
      const fd = openSync(tmp, 'wx', 0o600);
      try {
        writeSync(fd, bytes);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, file);
      fsyncDir(sub);
    }
    return { digest: hex, size: bytes.byteLength };
  }

  /** The bytes named by `hex`, or null if not kept. Throws if the file no longer matches its name. */
  get(hex: string): Buffer | null {
    // The digest may come from a caller or a payload: never let it name a path outside the store.
    if (typeof hex !== 'string' || !HEX32_PATTERN.test(hex))
      throw new WardenError('E_BAD_INPUT', 'a blob digest is 64 lower-case hex digits');
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.pathOf(hex));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    if (digest('sha256', bytes) !== hex) throw new WardenError('E_LEDGER', `blob ${hex} does not match its digest: it was altered`);
    return bytes;
  }

  /** Stores the bytes and describes them for an entry's payload: digest, size and a short preview. */
  ref(bytes: Uint8Array, previewChars: number): BlobRef {
    const { digest: hex, size } = this.put(bytes);
    // Decode a little more than needed so a character cut at the byte boundary is not counted.
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, previewChars * 4)).toString('utf8');
    const chars = Array.from(text);
    return {
      digest: hex,
      size,
      preview: chars.slice(0, previewChars).join(''),
      truncated: chars.length > previewChars || bytes.byteLength > previewChars * 4,
    };
  }
}
