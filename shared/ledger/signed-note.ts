// Reading C2SP signed notes (https://c2sp.org/signed-note), checkpoints (https://c2sp.org/tlog-checkpoint)
// and verifier keys without any crypto library: the parsing a page needs before it hands the signed
// text, the signature and the key to WebCrypto. Same rules as the engine's note.ts (which signs, and is
// held to Go's sumdb/note bytes); the unit specs run both on the same notes. Every input is hostile.

export class NoteFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoteFormatError';
  }
}

const SIG_PREFIX = '\u2014 '; // "— "
const NAME = /^[^\s+]+$/u;
const MAX_SIGNATURES = 100;
const ALG_ED25519 = 0x01;
// Text may hold any Unicode except control characters other than newline.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const BAD_TEXT = /[\u0000-\u0009\u000b-\u001f\u007f]|\p{Cs}/u;

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_TEXT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]!;
    out += i + 1 < bytes.length ? B64[(n >> 6) & 63]! : '=';
    out += i + 2 < bytes.length ? B64[n & 63]! : '=';
  }
  return out;
}

/** Standard padded base64, canonical only (the re-encoding must give the same text); null otherwise. */
export function fromBase64(text: string): Uint8Array | null {
  if (typeof text !== 'string' || !B64_TEXT.test(text)) return null;
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const n = [0, 1, 2, 3].reduce((acc, j) => (acc << 6) | Math.max(0, B64.indexOf(text[i + j]!)), 0);
    for (const shift of [16, 8, 0]) if (o < out.length) out[o++] = (n >> shift) & 255;
  }
  return toBase64(out) === text ? out : null;
}

/** UTF-8 of well-formed text (lone surrogates become U+FFFD, as TextEncoder does). */
export function utf8(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    let c = ch.codePointAt(0)!;
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}

export interface NoteSignature {
  name: string;
  /** 4 bytes. */
  keyId: Uint8Array;
  /** What follows the key id: 64 bytes for an Ed25519 signature. */
  signature: Uint8Array;
}

export interface ParsedNote {
  /** The signed text: everything before the blank line, with its final newline. */
  text: string;
  signatures: NoteSignature[];
}

export function parseNote(note: string): ParsedNote {
  if (typeof note !== 'string' || note.length > 1_000_000 || BAD_TEXT.test(note)) throw new NoteFormatError('malformed note');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteFormatError('malformed note: no signature block');
  const text = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (!block.endsWith('\n')) throw new NoteFormatError('malformed note: signature block must end in newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new NoteFormatError('malformed note: too many signatures');
  const signatures = lines.map((line): NoteSignature => {
    if (!line.startsWith(SIG_PREFIX)) throw new NoteFormatError('malformed note: bad signature line');
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    const name = rest.slice(0, space);
    const blob = fromBase64(rest.slice(space + 1));
    if (space <= 0 || !NAME.test(name) || !blob || blob.length < 5) throw new NoteFormatError('malformed note: bad signature line');
    return { name, keyId: blob.subarray(0, 4), signature: blob.subarray(4) };
  });
  return { text, signatures };
}

export interface CheckpointText {
  origin: string;
  size: number;
  root: Uint8Array;
}

/** A C2SP checkpoint body: origin, decimal size, base64 root; extension lines are allowed and ignored. */
export function parseCheckpointText(text: string): CheckpointText {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '')
    throw new NoteFormatError('malformed checkpoint: want origin, size and root lines');
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (!origin) throw new NoteFormatError('malformed checkpoint: empty origin');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText)))
    throw new NoteFormatError('malformed checkpoint: bad size');
  const root = fromBase64(rootText);
  if (!root || root.length !== 32) throw new NoteFormatError('malformed checkpoint: root is not base64 of 32 bytes');
  return { origin, size: Number(sizeText), root };
}

export interface ParsedVkey {
  name: string;
  /** 4 bytes, as written in the key (check it with keyIdInput). */
  keyId: Uint8Array;
  /** 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
}

/** name+hex(keyid)+base64(0x01 ‖ key). The key id is checked by the caller: SHA-256(keyIdInput)[0..4]. */
export function parseVkey(vkey: string): ParsedVkey {
  if (typeof vkey !== 'string') throw new NoteFormatError('malformed verifier key');
  const first = vkey.indexOf('+');
  const second = vkey.indexOf('+', first + 1);
  if (first <= 0 || second < 0) throw new NoteFormatError('malformed verifier key: want name+keyid+key');
  const name = vkey.slice(0, first);
  const id = vkey.slice(first + 1, second);
  const bytes = fromBase64(vkey.slice(second + 1));
  if (!NAME.test(name) || !/^[0-9a-f]{8}$/.test(id) || !bytes || bytes.length !== 33 || bytes[0] !== ALG_ED25519)
    throw new NoteFormatError('malformed verifier key: want name+keyid+base64(0x01 ‖ Ed25519 key)');
  const keyId = Uint8Array.from({ length: 4 }, (_, i) => parseInt(id.slice(i * 2, i * 2 + 2), 16));
  return { name, keyId, publicKey: bytes.subarray(1) };
}

/** What the key id hashes: name ‖ "\n" ‖ 0x01 ‖ key. */
export function keyIdInput(name: string, publicKey: Uint8Array): Uint8Array {
  const n = utf8(`${name}\n`);
  const out = new Uint8Array(n.length + 1 + publicKey.length);
  out.set(n);
  out[n.length] = ALG_ED25519;
  out.set(publicKey, n.length + 1);
  return out;
}

const SPKI_ED25519_PREFIX = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];

/**
 * The key's SubjectPublicKeyInfo PEM, byte for byte as the engine writes it (one base64 line): the
 * ledger's key fingerprint is SHA-256 of this text, so the page can show the same fingerprint as the
 * header, `warden audit` and the bundle's `publicKey.spkiPem`.
 */
export function spkiPem(publicKey: Uint8Array): string {
  const der = Uint8Array.from([...SPKI_ED25519_PREFIX, ...publicKey]);
  return `-----BEGIN PUBLIC KEY-----\n${toBase64(der)}\n-----END PUBLIC KEY-----\n`;
}
