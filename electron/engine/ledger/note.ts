// C2SP signed notes (https://c2sp.org/signed-note) carrying C2SP tlog checkpoints
// (https://c2sp.org/tlog-checkpoint), Ed25519 only. Same bytes as Go's golang.org/x/mod/sumdb/note,
// so any witness or verifier from that ecosystem can check Warden's checkpoints.
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

const ALG_ED25519 = 0x01;
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SIG_PREFIX = '\u2014 '; // "— "
const NAME = /^[^\s+]+$/u;
const MAX_SIGNATURES = 100;

export class NoteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoteError';
  }
}

export interface VerifierKey {
  name: string;
  keyId: Buffer;
  publicKey: KeyObject;
  /** 32-byte Ed25519 public key. */
  raw: Buffer;
  /** name+hex(keyid)+base64(0x01 ‖ raw) */
  vkey: string;
}

export interface SignerKey extends VerifierKey {
  privateKey: KeyObject;
}

/** Key ID = first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key). */
export function keyIdFor(name: string, raw: Buffer): Buffer {
  return createHash('sha256')
    .update(name)
    .update('\n')
    .update(Buffer.from([ALG_ED25519]))
    .update(raw)
    .digest()
    .subarray(0, 4);
}

export function verifierFromRaw(name: string, raw: Buffer): VerifierKey {
  if (!NAME.test(name)) throw new NoteError(`key name "${name}" must be non-empty and hold no spaces or "+"`);
  if (raw.length !== 32) throw new NoteError('an Ed25519 public key is 32 bytes');
  const keyId = keyIdFor(name, raw);
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
  const vkey = `${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([ALG_ED25519]), raw]).toString('base64')}`;
  return { name, keyId, publicKey, raw, vkey };
}

export function signerFromPrivateKey(name: string, privateKey: KeyObject): SignerKey {
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new NoteError('the ledger key must be Ed25519');
  const raw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(SPKI_ED25519_PREFIX.length);
  return { ...verifierFromRaw(name, Buffer.from(raw)), privateKey };
}

/** Go's "PRIVATE+KEY+name+keyid+base64(0x01 ‖ seed)" form, used by the published test vectors. */
export function signerFromGoKey(skey: string): SignerKey {
  const parts = skey.split('+');
  if (parts.length < 5 || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') throw new NoteError('malformed signer key');
  const seed = Buffer.from(parts.slice(4).join('+'), 'base64');
  if (seed.length !== 33 || seed[0] !== ALG_ED25519) throw new NoteError('malformed signer key');
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed.subarray(1)]), format: 'der', type: 'pkcs8' });
  return signerFromPrivateKey(parts[2]!, privateKey);
}

export function parseVkey(vkey: string): VerifierKey {
  const first = vkey.indexOf('+');
  const second = vkey.indexOf('+', first + 1);
  if (first <= 0 || second < 0) throw new NoteError('malformed verifier key: want name+keyid+key');
  const name = vkey.slice(0, first);
  const id = vkey.slice(first + 1, second);
  const material = vkey.slice(second + 1);
  const bytes = Buffer.from(material, 'base64');
  if (!/^[0-9a-f]{8}$/.test(id) || bytes.toString('base64') !== material || bytes.length !== 33 || bytes[0] !== ALG_ED25519) {
    throw new NoteError('malformed verifier key: want name+keyid+base64(0x01 ‖ Ed25519 key)');
  }
  const key = verifierFromRaw(name, bytes.subarray(1));
  if (key.keyId.toString('hex') !== id) throw new NoteError('verifier key id does not match its name and key');
  return key;
}

// Text may hold any Unicode except control characters other than newline.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const BAD_TEXT = /[\u0000-\u0009\u000b-\u001f\u007f]|\p{Cs}/u;

export function signNote(text: string, key: SignerKey): string {
  if (!text.endsWith('\n') || BAD_TEXT.test(text) || text.includes('\n\n'))
    throw new NoteError('note text must be lines ending in newline, no blank lines');
  const sig = sign(null, Buffer.from(text, 'utf8'), key.privateKey);
  return `${text}\n${SIG_PREFIX}${key.name} ${Buffer.concat([key.keyId, sig]).toString('base64')}\n`;
}

export interface OpenedNote {
  text: string;
  /** Signatures by other keys are kept but not checked. */
  signatures: Array<{ name: string; keyId: string }>;
}

/** Checks the note's signature by `key` and returns its text; throws NoteError otherwise. */
export function openNote(note: string, key: VerifierKey): OpenedNote {
  if (typeof note !== 'string' || note.length > 1_000_000 || BAD_TEXT.test(note)) throw new NoteError('malformed note');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('malformed note: no signature block');
  const text = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (!block.endsWith('\n')) throw new NoteError('malformed note: signature block must end in newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new NoteError('malformed note: too many signatures');
  const signatures: OpenedNote['signatures'] = [];
  let verified = false;
  for (const line of lines) {
    if (!line.startsWith(SIG_PREFIX)) throw new NoteError('malformed note: bad signature line');
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    const name = rest.slice(0, space);
    const b64 = rest.slice(space + 1);
    const blob = Buffer.from(b64, 'base64');
    if (space <= 0 || !NAME.test(name) || blob.toString('base64') !== b64 || blob.length < 5)
      throw new NoteError('malformed note: bad signature line');
    const keyId = blob.subarray(0, 4);
    signatures.push({ name, keyId: keyId.toString('hex') });
    if (name !== key.name || !keyId.equals(key.keyId)) continue;
    if (blob.length !== 68 || !verify(null, Buffer.from(text, 'utf8'), key.publicKey, blob.subarray(4))) {
      throw new NoteError(`signature by ${key.name} does not verify`);
    }
    verified = true;
  }
  if (!verified) throw new NoteError(`note is not signed by ${key.name}+${key.keyId.toString('hex')}`);
  return { text, signatures };
}

export interface CheckpointBody {
  origin: string;
  size: number;
  root: Buffer;
}

export function formatCheckpoint(c: CheckpointBody): string {
  return `${c.origin}\n${c.size}\n${c.root.toString('base64')}\n`;
}

/** Parses a C2SP checkpoint body: origin, decimal size, base64 root; extension lines are allowed and ignored. */
export function parseCheckpoint(text: string): CheckpointBody {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') throw new NoteError('malformed checkpoint: want origin, size and root lines');
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (!origin) throw new NoteError('malformed checkpoint: empty origin');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText)))
    throw new NoteError('malformed checkpoint: bad size');
  const root = Buffer.from(rootText, 'base64');
  if (root.length !== 32 || root.toString('base64') !== rootText)
    throw new NoteError('malformed checkpoint: root is not base64 of 32 bytes');
  return { origin, size: Number(sizeText), root };
}
