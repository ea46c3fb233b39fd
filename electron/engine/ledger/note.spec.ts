import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatCheckpoint, openNote, parseCheckpoint, parseVkey, signerFromGoKey, signNote } from './note.js';
import { loadOrCreateSigner, loadVerifier, PRIVATE_KEY_FILE, VERIFIER_KEY_FILE } from './signing.js';

// The published example of golang.org/x/mod/sumdb/note (note.go, note_test.go).
const GO_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const GO_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE = `${GO_TEXT}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;
const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';

describe('C2SP signed note', () => {
  it('derives the published verifier key from the published signer key', () => {
    expect(signerFromGoKey(GO_SKEY).vkey).toBe(GO_VKEY);
    expect(parseVkey(GO_VKEY).keyId.toString('hex')).toBe('c74f20a3');
  });

  it('signs the published example byte for byte (Ed25519 is deterministic)', () => {
    expect(signNote(GO_TEXT, signerFromGoKey(GO_SKEY))).toBe(GO_NOTE);
  });

  it('opens the published note with the published key', () => {
    expect(openNote(GO_NOTE, parseVkey(GO_VKEY)).text).toBe(GO_TEXT);
  });

  it.each([
    ['a changed letter', GO_NOTE.replace('cryptography', 'cryptographY')],
    ['a dropped final newline of the text', GO_NOTE.replace('is.\n\n', 'is.\n')],
    ['no signature', GO_TEXT],
    ['a signature by another key only', GO_NOTE.replace('PeterNeumann x08go', 'EnochRoot x08go')],
    ['a flipped signature byte', GO_NOTE.replace('x08go/ZJ', 'x08go/ZK')],
    ['a truncated signature', GO_NOTE.replace('nAM=\n', '\n')],
    ['non-canonical base64', GO_NOTE.replace('nAM=', 'nAN=')],
    ['a control character', GO_NOTE.replace('answer', 'ans\u0007wer')],
    ['a missing em dash', GO_NOTE.replace('\u2014 ', '- ')],
  ])('rejects a note with %s', (_what, note) => {
    expect(() => openNote(note, parseVkey(GO_VKEY))).toThrow();
  });

  it('rejects malformed verifier keys and a key id that does not match', () => {
    for (const bad of [
      '',
      'PeterNeumann',
      'PeterNeumann+c74f20a3',
      GO_VKEY.replace('c74f20a3', 'c74f20a4'),
      GO_VKEY.replace('PeterNeumann', 'PeterNeumanm'),
      GO_VKEY.slice(0, -1),
      GO_VKEY.replace('+ARpc', '+AhTpc'),
    ]) {
      expect(() => parseVkey(bad), bad).toThrow();
    }
    expect(() => parseVkey(ENOCH_VKEY)).not.toThrow();
  });

  it('round-trips a checkpoint and rejects malformed ones', () => {
    const root = Buffer.alloc(32, 7);
    const body = formatCheckpoint({ origin: 'warden.local/ledger/abc', size: 42, root });
    expect(body).toBe(`warden.local/ledger/abc\n42\n${root.toString('base64')}\n`);
    expect(parseCheckpoint(body)).toEqual({ origin: 'warden.local/ledger/abc', size: 42, root });
    expect(parseCheckpoint(`${body}extension line\n`).size).toBe(42);
    for (const bad of [
      'o\n42\n',
      'o\n042\nAAAA\n',
      `o\n-1\n${root.toString('base64')}\n`,
      `o\n1e3\n${root.toString('base64')}\n`,
      `\n1\n${root.toString('base64')}\n`,
      `o\n1\n${Buffer.alloc(31).toString('base64')}\n`,
      `o\n1\n${root.toString('base64')}`,
    ]) {
      expect(() => parseCheckpoint(bad), JSON.stringify(bad)).toThrow();
    }
  });
});

describe('ledger key files', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const temp = () => {
    const d = mkdtempSync(join(tmpdir(), 'warden-keys-'));
    dirs.push(d);
    return join(d, 'keys');
  };

  it('creates an Ed25519 key on first use, private file 0600 in a 0700 directory, and reuses it', () => {
    const dir = temp();
    const a = loadOrCreateSigner(dir);
    expect(statSync(join(dir, PRIVATE_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dir, VERIFIER_KEY_FILE), 'utf8').trim()).toBe(a.vkey);
    const b = loadOrCreateSigner(dir);
    expect(b.vkey).toBe(a.vkey);
    expect(loadVerifier(dir)?.vkey).toBe(a.vkey);
    const note = signNote('origin\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n', b);
    expect(openNote(note, loadVerifier(dir)!).text).toContain('origin');
  });

  it('tightens a loosened private key mode back to 0600', () => {
    const dir = temp();
    loadOrCreateSigner(dir);
    chmodSync(join(dir, PRIVATE_KEY_FILE), 0o644);
    loadOrCreateSigner(dir);
    expect(statSync(join(dir, PRIVATE_KEY_FILE)).mode & 0o777).toBe(0o600);
  });

  it('refuses to make a new key when only the public half is left', () => {
    const dir = temp();
    loadOrCreateSigner(dir);
    rmSync(join(dir, PRIVATE_KEY_FILE));
    expect(() => loadOrCreateSigner(dir)).toThrow(/private key is missing/);
    expect(existsSync(join(dir, PRIVATE_KEY_FILE))).toBe(false);
  });

  it('refuses a verifier key file that does not match the private key', () => {
    const dir = temp();
    loadOrCreateSigner(dir);
    writeFileSync(join(dir, VERIFIER_KEY_FILE), `${GO_VKEY}\n`);
    expect(() => loadOrCreateSigner(dir)).toThrow(/does not match/);
  });
});
