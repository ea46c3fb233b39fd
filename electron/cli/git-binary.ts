// Binary files in a patch, as git writes them (`git diff --binary`): a full `index` line of git blob
// ids, then `GIT binary patch` and a `literal` hunk: the bytes zlib-deflated and base85-encoded in
// lines of at most 52 bytes, each led by its length (A–Z for 1–26, a–z for 27–52). `git apply`
// takes it only with full blob ids and checks the result against the new one, so a file it writes
// is byte for byte the one the sandbox held.
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

const EN85 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';
export const NULL_BLOB = '0'.repeat(40);

/** The git blob id (SHA-1 of "blob <size>\0" and the bytes) git names a file's contents by. */
export function gitBlobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** git's base85 (encode_85): each 4 bytes, big-endian, as 5 characters; a short last group is zero-padded. */
function encode85(data: Buffer): string {
  let out = '';
  for (let i = 0; i < data.length; i += 4) {
    let acc = 0;
    for (let j = 0; j < 4; j++) acc = acc * 256 + (i + j < data.length ? data[i + j]! : 0);
    let group = '';
    for (let k = 0; k < 5; k++) {
      group = EN85[acc % 85]! + group;
      acc = Math.floor(acc / 85);
    }
    out += group;
  }
  return out;
}

/** One `literal` hunk: the size, then the deflated bytes in length-led base85 lines, then a blank line. */
function literal(bytes: Buffer): string {
  // Level 1, as git's own (zlib_compression_level defaults to Z_BEST_SPEED): the same text git diff --binary writes.
  const deflated = deflateSync(bytes, { level: 1 });
  let text = `literal ${bytes.length}\n`;
  for (let off = 0; off < deflated.length; off += 52) {
    const line = deflated.subarray(off, off + 52);
    const lead = line.length <= 26 ? String.fromCharCode(64 + line.length) : String.fromCharCode(96 + line.length - 26);
    text += `${lead}${encode85(line)}\n`;
  }
  return `${text}\n`;
}

/**
 * A new file's section (`diff --git` header included): `git apply` creates it with exactly `bytes`.
 * The reverse hunk (empty) lets `git apply -R` take it back out.
 */
export function addedBinarySection(path: string, mode: string, bytes: Buffer): string {
  let text = `diff --git a/${path} b/${path}\nnew file mode ${mode}\n`;
  text += `index ${NULL_BLOB}..${gitBlobId(bytes)}\nGIT binary patch\n`;
  return text + literal(bytes) + literal(Buffer.alloc(0));
}
