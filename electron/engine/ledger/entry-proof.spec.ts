// The in-page proof check (shared/ledger/entry-proof.ts), run here with Node's WebCrypto — the same
// API the Ledger view uses — against proofs a real ledger serves, and against a server that lies:
// a wrong path, a wrong root, a forged signature, another key, a changed entry. And the shared RFC
// 6962 walk itself, on random trees: every leaf's proof leads to the root, any flipped bit does not.
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkEntryProof, entryCanonicalText, type ProofCrypto } from '../../../shared/ledger/entry-proof.js';
import { bytesEqual, inclusionRootAsync, inclusionSides, leafInput, toHex } from '../../../shared/ledger/rfc6962.js';
import { fromBase64, keyIdInput, parseNote, parseVkey as parseVkeyShared, toBase64 } from '../../../shared/ledger/signed-note.js';
import type { LedgerProof, ProofVerdict } from '../../../shared/types/ledger-proof.js';
import { inclusionPath, leafHash, nodeHash, rootOf, type Hash } from './merkle.js';
import type { Ledger } from './ledger.js';
import { LedgerReader } from './ledger-reader.js';
import { formatCheckpoint, parseVkey, signerFromPrivateKey, signNote } from './note.js';
import { sampleEntry, tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';

const subtle = webcrypto.subtle;
const crypto: ProofCrypto = {
  sha256: async (d) => new Uint8Array(await subtle.digest('SHA-256', d)),
  ed25519Verify: async (key, sig, msg) =>
    subtle.verify('Ed25519', await subtle.importKey('raw', key, 'Ed25519', false, ['verify']), sig, msg),
};
const sha = crypto.sha256;

describe('the shared RFC 6962 walk on random trees', () => {
  const tree = fc
    .integer({ min: 1, max: 70 })
    .chain((n) => fc.tuple(fc.constant(n), fc.uniqueArray(fc.nat(), { minLength: n, maxLength: n })));
  const leavesOf = ([n, seeds]: [number, number[]]): Hash[] =>
    Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`leaf ${seeds[i]}`)));
  const pathOf = (leaves: Hash[], i: number) => inclusionPath(i, leaves.length, (s, e) => rootOf(leaves.slice(s, e)));

  it('every leaf of every tree: its path leads to the root (WebCrypto, async)', async () => {
    await fc.assert(
      fc.asyncProperty(tree, async (t) => {
        const leaves = leavesOf(t);
        const root = rootOf(leaves);
        for (let i = 0; i < leaves.length; i++) {
          const path = pathOf(leaves, i);
          const sides = inclusionSides(i, leaves.length, path.length);
          expect(typeof sides).not.toBe('string');
          expect(bytesEqual(await inclusionRootAsync(leaves[i]!, path, sides as never, sha), root)).toBe(true);
        }
      }),
      { numRuns: 40, seed: 6962 },
    );
  });

  it('any flipped bit — in the leaf, a path hash or the root — fails', async () => {
    const flip = fc.record({
      t: tree,
      at: fc.nat(),
      bit: fc.integer({ min: 0, max: 255 }),
      where: fc.constantFrom('leaf', 'path', 'root'),
    });
    await fc.assert(
      fc.asyncProperty(flip, async ({ t, at, bit, where }) => {
        const leaves = leavesOf(t);
        const i = at % leaves.length;
        const path = pathOf(leaves, i).map((h) => Buffer.from(h));
        let leaf = Buffer.from(leaves[i]!);
        const root = Buffer.from(rootOf(leaves));
        const flipIn = (b: Buffer) => (b[bit >> 3]! ^= 1 << (bit & 7));
        if (where === 'leaf') flipIn(leaf);
        else if (where === 'root') flipIn(root);
        else if (path.length > 0) flipIn(path[at % path.length]!);
        else leaf = Buffer.from(leaf.map((b, k) => (k === 0 ? b ^ 1 : b))); // a one-leaf tree has no path: flip the leaf
        const sides = inclusionSides(i, leaves.length, path.length) as never;
        expect(bytesEqual(await inclusionRootAsync(leaf, path, sides, sha), root)).toBe(false);
      }),
      { numRuns: 200, seed: 9162 },
    );
  });

  it('a path of the wrong length, or for a leaf outside the tree, is refused by its shape', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.nat(), fc.integer({ min: 1, max: 3 }), (n, at, delta) => {
        const i = at % n;
        const sides = inclusionSides(i, n, 64);
        const right = inclusionPath(i, n, () => Buffer.alloc(32)).length;
        expect(sides).toBeTypeOf('string'); // 64 is too long for any tree this size
        expect(inclusionSides(i, n, right)).toHaveLength(right);
        expect(inclusionSides(i, n, right + delta)).toBeTypeOf('string');
        if (right >= delta) expect(inclusionSides(i, n, right - delta)).toBeTypeOf('string');
        expect(inclusionSides(n, n, right)).toBeTypeOf('string');
      }),
      { numRuns: 300, seed: 17 },
    );
  });

  it('agrees with node:crypto hashing (the sync fold the bundle verifier uses)', async () => {
    const a = Buffer.from('a'.repeat(64), 'hex');
    const b = Buffer.from('b'.repeat(64), 'hex');
    expect(bytesEqual(await inclusionRootAsync(a, [b], ['right'], sha), nodeHash(a, b))).toBe(true);
  });
});

describe('the shared note reader against the published Go example', () => {
  const GO_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
  const GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
  const GO_NOTE = `${GO_TEXT}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

  it('parses the note and key, and WebCrypto verifies the signature', async () => {
    const key = parseVkeyShared(GO_VKEY);
    expect(Buffer.from(key.publicKey).equals(parseVkey(GO_VKEY).raw)).toBe(true);
    expect(bytesEqual((await sha(keyIdInput(key.name, key.publicKey))).subarray(0, 4), key.keyId)).toBe(true);
    const note = parseNote(GO_NOTE);
    expect(note.text).toBe(GO_TEXT);
    const sig = note.signatures[0]!;
    expect(await crypto.ed25519Verify(key.publicKey, sig.signature, Buffer.from(note.text))).toBe(true);
  });

  it('base64 is canonical only', () => {
    for (const s of ['', 'AA==', 'AAA=', 'AAAA', '+/+/']) expect(toBase64(fromBase64(s)!)).toBe(s);
    for (const s of ['A', 'AB==', 'AAB=', 'AA=A', 'AA AA', '====']) expect(fromBase64(s), s).toBeNull();
  });
});

describe('checkEntryProof against a real ledger and a lying server', () => {
  let t: TempLedger;
  let l: Ledger;
  let reader: LedgerReader;
  const proof = (seq: number) => reader['ledger.proof']({ seq });

  beforeAll(() => {
    t = tempLedger();
    l = t.open();
    for (let i = 1; i <= 13; i++) l.append(sampleEntry(i));
    l.checkpoint();
    l.append(sampleEntry(14)); // newer than the checkpoint
    reader = new LedgerReader(l);
  });
  afterAll(() => {
    l.close();
    t.cleanup();
  });

  const failed = async (p: unknown, reason: string, shown?: LedgerProof['entry']) => {
    const v = await checkEntryProof(p, crypto, shown ? { shown } : {});
    expect(v, JSON.stringify(v)).toMatchObject({ status: 'failed', reason });
    return v as Extract<ProofVerdict, { status: 'failed' }>;
  };

  it('every entry the checkpoint covers checks out, with the fingerprint the header shows', async () => {
    const fingerprint = (await reader['ledger.summary']()).key.fingerprint;
    for (let seq = 1; seq <= 13; seq++) {
      const p = await proof(seq);
      const v = await checkEntryProof(p, crypto, { shown: p.entry, trustedFingerprint: fingerprint });
      expect(v, JSON.stringify(v)).toMatchObject({ status: 'ok', seq, leafHash: p.entry.hash, checkpoint: { size: 13, fingerprint } });
      expect(v.checkpoint?.root).toBe(l.root(13));
    }
  });

  it('an entry newer than the latest checkpoint is pending until one is signed', async () => {
    const before = await checkEntryProof(await proof(14), crypto);
    expect(before).toMatchObject({ status: 'pending', seq: 14, checkpoint: { size: 13 } });
    await reader['ledger.checkpoint']();
    expect(await checkEntryProof(await proof(14), crypto)).toMatchObject({ status: 'ok', checkpoint: { size: 14 } });
  });

  it('a wrong path: a changed hash, one too few, one too many, another tree size', async () => {
    const p = await proof(5);
    const path = p.inclusion!.path;
    const changed = {
      ...p,
      inclusion: { ...p.inclusion!, path: [path[0]!.replace(/^./, (c) => (c === '0' ? '1' : '0')), ...path.slice(1)] },
    };
    expect((await failed(changed, 'root mismatch')).detail).toMatch(/leads to root .* the checkpoint signed/);
    await failed({ ...p, inclusion: { ...p.inclusion!, path: path.slice(1) } }, 'bad path');
    await failed({ ...p, inclusion: { ...p.inclusion!, path: [...path, path[0]!] } }, 'bad path');
    await failed({ ...p, inclusion: { ...p.inclusion!, treeSize: p.inclusion!.treeSize - 1 } }, 'bad path');
    await failed({ ...p, inclusion: { ...p.inclusion!, path: ['xyz', ...path.slice(1)] } }, 'malformed');
    await failed({ ...p, inclusion: null }, 'malformed'); // covered by the checkpoint, yet no path
  });

  it('a wrong root: the checkpoint text changed after signing', async () => {
    const p = await proof(5);
    const body = parseNote(p.checkpoint!.note).text;
    const root = body.split('\n')[2]!;
    const forgedRoot = toBase64(new Uint8Array(32).fill(7));
    const v = await failed({ ...p, checkpoint: { ...p.checkpoint!, note: p.checkpoint!.note.replace(root, forgedRoot) } }, 'bad signature');
    expect(v.detail).toMatch(/does not verify/);
  });

  it('a forged signature: a flipped bit, a signature by another key under the ledger key name, none at all', async () => {
    const p = await proof(5);
    const note = p.checkpoint!.note;
    const sigLine = note.slice(note.lastIndexOf('\n\n') + 2);
    const blob = fromBase64(sigLine.trim().split(' ')[2]!)!;
    blob[10]! ^= 1;
    const flipped = note.replace(sigLine, `${sigLine.split(' ').slice(0, 2).join(' ')} ${toBase64(blob)}\n`);
    await failed({ ...p, checkpoint: { ...p.checkpoint!, note: flipped } }, 'bad signature');
    // An attacker's key signs the same text, the line claiming the ledger key's name and id.
    const other = signerFromPrivateKey(parseVkey(p.vkey).name, generateKeyPairSync('ed25519').privateKey);
    const forged = signNote(parseNote(note).text, other);
    const forgedBlob = fromBase64(forged.slice(forged.lastIndexOf(' ') + 1).trim())!;
    forgedBlob.set(parseVkey(p.vkey).keyId, 0);
    const claimed = `${parseNote(note).text}\n\u2014 ${other.name} ${toBase64(forgedBlob)}\n`;
    expect((await failed({ ...p, checkpoint: { ...p.checkpoint!, note: claimed } }, 'bad signature')).detail).toMatch(/does not verify/);
    await failed({ ...p, checkpoint: { ...p.checkpoint!, note: signNote(parseNote(note).text, other) } }, 'bad signature');
  });

  it('another key, self-consistent: caught only against a trusted fingerprint (the page pins the first one)', async () => {
    const p = await proof(5);
    const fingerprint = (await reader['ledger.summary']()).key.fingerprint;
    const other = signerFromPrivateKey('mallory', generateKeyPairSync('ed25519').privateKey);
    const body = parseNote(p.checkpoint!.note).text;
    const swapped = { ...p, vkey: other.vkey, checkpoint: { ...p.checkpoint!, note: signNote(body, other) } };
    const unpinned = await checkEntryProof(swapped, crypto);
    expect(unpinned).toMatchObject({ status: 'ok', checkpoint: { keyName: 'mallory' } });
    expect(unpinned.checkpoint?.fingerprint).not.toBe(fingerprint);
    await checkEntryProof(swapped, crypto, { trustedFingerprint: fingerprint }).then((v) => expect(v).toMatchObject({ reason: 'bad key' }));
    await failed({ ...p, vkey: p.vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+') }, 'bad key');
  });

  it('a changed entry: its hash no longer matches; recomputed, the path no longer reaches the root', async () => {
    const p = await proof(6);
    await failed({ ...p, entry: { ...p.entry, actor: 'someone-else' } }, 'hash mismatch');
    // A self-consistent forgery: fields changed and the hash recomputed from them.
    const forged = { ...p.entry, actor: 'someone-else' };
    const rehashed = { ...forged, hash: toHex(await sha(leafInput(Buffer.from(entryCanonicalText(forged)!)))) };
    await failed({ ...p, entry: rehashed }, 'root mismatch');
    // The proof of another entry, offered for this one.
    await failed(await proof(7), 'entry mismatch', p.entry);
  });

  it('not a proof at all, and a page without Ed25519', async () => {
    await failed(null, 'malformed');
    await failed({ ...(await proof(3)), extra: 1 }, 'malformed');
    const noEd = { ...crypto, ed25519Verify: () => Promise.reject(new Error('Ed25519 is not supported')) };
    expect(await checkEntryProof(await proof(3), noEd)).toMatchObject({ status: 'failed', reason: 'unsupported' });
  });

  it('the proof of a checkpoint signed over a tree the checkpoint file holds is the one the bundle verifier accepts', async () => {
    const p = await proof(9);
    const body = parseNote(p.checkpoint!.note).text;
    expect(body).toBe(formatCheckpoint({ origin: l.origin, size: 14, root: Buffer.from(l.root(14), 'hex') }));
  });
});
