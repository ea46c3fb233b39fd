import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportBundleSchema, type ReportBundle } from '../../../shared/types/ledger.js';
import { verifyBundle } from './bundle-verify.js';
import { exportBundle } from './export.js';
import { Ledger } from './ledger.js';
import { signerFromGoKey } from './note.js';
import { esc, renderReportHtml } from './report-html.js';
import { sampleEntry, tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';

const SCRIPT = fileURLToPath(new URL('./auditor/verify_bundle.py', import.meta.url));
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const hasPython = has('python3') && has('openssl');

let t: TempLedger;
let l: Ledger;
let full: ReportBundle;
let history: { before: ReportBundle; after: ReportBundle; fork: ReportBundle } | undefined;
beforeAll(() => {
  t = tempLedger();
  l = t.open();
  l.appendBatch(Array.from({ length: 30 }, (_, i) => sampleEntry(i)));
  // Untrusted text from a sandbox, with markup, bidi overrides and floats in it.
  l.append({
    actor: 'agent-<b>x</b>',
    sandboxId: 'sb-alpha',
    kind: 'exec.finished',
    payload: { stdout: '<script>alert(1)</script>"><img src=x onerror=alert(2)>', rtl: 'abc\u202edcba', ratio: 0.1, big: 1e21 },
  });
  full = exportBundle(l);
});
afterAll(() => {
  l.close();
  t.cleanup();
});

const clone = (b: ReportBundle): ReportBundle => JSON.parse(JSON.stringify(b)) as ReportBundle;

function python(bundle: ReportBundle, ...args: string[]): { code: number; out: string } {
  const file = join(t.dir, `py-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(bundle));
  const run = spawnSync('python3', [SCRIPT, file, ...args], { encoding: 'utf8' });
  rmSync(file);
  return { code: run.status ?? -1, out: run.stdout + run.stderr };
}

const tamper: Array<[string, (b: ReportBundle) => void, { seq: number; reason: string }]> = [
  ['a payload byte', (b) => ((b.entries[10]!.payload as { n: number }).n = 999), { seq: 11, reason: 'hash mismatch' }],
  ['an actor', (b) => (b.entries[3]!.actor = 'someone'), { seq: 4, reason: 'hash mismatch' }],
  ['a prev hash', (b) => (b.entries[7]!.prevHash = 'f'.repeat(64)), { seq: 8, reason: 'hash mismatch' }],
  ['an entry removed', (b) => b.entries.splice(12, 1), { seq: 13, reason: 'gap' }],
  ['two entries swapped', (b) => b.entries.splice(5, 2, b.entries[6]!, b.entries[5]!), { seq: 6, reason: 'reordered' }],
  ['an entry duplicated', (b) => b.entries.splice(9, 0, b.entries[9]!), { seq: 10, reason: 'duplicate' }],
  ['the proof cut short', (b) => b.proofs[0]!.path.pop(), { seq: 1, reason: 'checkpoint mismatch' }],
  ['the proof emptied', (b) => (b.proofs[0]!.path = []), { seq: 1, reason: 'checkpoint mismatch' }],
  ['a proof element corrupted', (b) => (b.proofs[0]!.path[0] = '0'.repeat(64)), { seq: 1, reason: 'checkpoint mismatch' }],
  ['the proof removed', (b) => (b.proofs = []), { seq: 1, reason: 'checkpoint mismatch' }],
  ['the proof for a wrong tree size', (b) => (b.proofs[0]!.treeSize += 1), { seq: 1, reason: 'checkpoint mismatch' }],
  ['the checkpoint root', (b) => (b.checkpoint.root = 'a'.repeat(64)), { seq: 1, reason: 'checkpoint mismatch' }],
  ['the signed note', (b) => (b.checkpoint.note = b.checkpoint.note.replace('\n31\n', '\n30\n')), { seq: 31, reason: 'bad signature' }],
  [
    'the PEM key swapped for another',
    (b) =>
      (b.publicKey.spkiPem = signerFromGoKey('PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz')
        .publicKey.export({ format: 'pem', type: 'spki' })
        .toString()),
    { seq: 31, reason: 'bad signature' },
  ],
];

describe('evidence bundle', () => {
  it('is self-contained, matches its schema and verifies offline', () => {
    expect(ReportBundleSchema.parse(full)).toEqual(full);
    expect(full.entries).toHaveLength(31);
    expect(full.proofs).toHaveLength(1); // one run of consecutive entries, one proof
    expect(full.verification).toMatchObject({ ok: true, entries: 31 });
    expect(full.checkpoint.size).toBe(31);
    expect(l.checkpoints().at(-1)?.reason).toBe('export'); // a checkpoint is signed at every export
    expect(verifyBundle(full)).toMatchObject({ ok: true, entries: 31, firstBad: null, checkpoint: { size: 31, source: 'bundle' } });
    expect(verifyBundle(full, { vkey: full.publicKey.vkey }).ok).toBe(true);
  });

  it('selects by sandbox (one proof per run) and by seq range', () => {
    const sb = exportBundle(l, { sandboxId: 'sb-beta' });
    expect(sb.entries.length).toBeGreaterThan(3);
    expect(sb.entries.every((e) => e.sandboxId === 'sb-beta')).toBe(true);
    expect(sb.proofs).toHaveLength(sb.entries.length); // sb-beta is every 4th entry: no two consecutive
    expect(verifyBundle(sb).ok).toBe(true);
    const range = exportBundle(l, { fromSeq: 5, toSeq: 12 });
    expect(range.entries.map((e) => e.seq)).toEqual([5, 6, 7, 8, 9, 10, 11, 12]);
    expect(verifyBundle(range).ok).toBe(true);
  });

  it('proves it extends an earlier export, and catches a forked history that does not', () => {
    const before = exportBundle(l, { fromSeq: 1, toSeq: 3 });
    const fork = tempLedger();
    execFileSync('sqlite3', [t.file, `VACUUM INTO '${fork.file}'`]); // a copy at this point
    l.appendBatch([40, 41, 42].map(sampleEntry));
    const after = exportBundle(l, { fromSeq: 30 });
    expect(after.consistency.some((c) => c.fromSize === before.checkpoint.size)).toBe(true);
    expect(verifyBundle(after, { previous: before }).ok).toBe(true);

    // The copy (same key, same origin) grows a different future, signed with the real key.
    const f = Ledger.open(fork.file, {
      keyDir: t.keyDir,
      checkpointFile: join(fork.dir, 'cp'),
      checkpointEveryMs: 0,
      checkpointOnClose: false,
    });
    f.appendBatch([1, 2, 3, 4, 5, 6, 7].map((i) => ({ ...sampleEntry(i), actor: 'rewriter' })));
    const forkBundle = exportBundle(f);
    f.close();
    fork.cleanup();
    expect(forkBundle.checkpoint.size).toBeGreaterThan(after.checkpoint.size);
    expect(verifyBundle(forkBundle).ok).toBe(true); // fine on its own…
    expect(verifyBundle(forkBundle, { previous: before }).ok).toBe(true); // …and it does extend the older export…
    expect(verifyBundle(forkBundle, { previous: after }).firstBad).toEqual({ seq: 1, reason: 'checkpoint mismatch' }); // …but not the newer one
    history = { before, after, fork: forkBundle };
  });

  it.each(tamper)('rejects a bundle with %s', (_what, change, firstBad) => {
    const b = clone(full);
    change(b);
    expect(verifyBundle(b).firstBad).toEqual(firstBad);
  });

  it('rejects a bundle signed by a key other than the pinned one, and non-bundles', () => {
    expect(verifyBundle(full, { vkey: 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW' }).firstBad).toEqual({
      seq: 31,
      reason: 'bad signature',
    });
    expect(() => verifyBundle({ hello: 1 })).toThrow(/not a Warden evidence bundle/);
  });
});

describe('HTML report', () => {
  const html = () => renderReportHtml(full, verifyBundle(full));
  it('escapes every piece of untrusted text and runs no script', () => {
    const page = html();
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/<img/i);
    expect(page).not.toContain('<b>x</b>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('agent-&lt;b&gt;x&lt;/b&gt;');
    expect(page).toContain('abc\\u202edcba'); // the bidi override is shown, not obeyed
    expect(page).not.toContain('\u202e');
    expect(page).toContain("default-src 'none'");
    // Every tag in the page is one the template wrote.
    const tags = new Set([...page.matchAll(/<\/?([a-zA-Z0-9]+)/g)].map((m) => m[1]!.toLowerCase()));
    expect(
      [...tags].filter(
        (tag) =>
          ![
            'html',
            'head',
            'meta',
            'title',
            'style',
            'body',
            'h1',
            'h2',
            'h3',
            'p',
            'dl',
            'dt',
            'dd',
            'code',
            'section',
            'table',
            'thead',
            'tbody',
            'tr',
            'th',
            'td',
            'ol',
            'li',
            'pre',
            // The timeline's inline SVG (report-timeline.ts).
            'span',
            'svg',
            'g',
            'a',
            'rect',
            'circle',
            'path',
            'line',
            'polyline',
            'text',
          ].includes(tag),
      ),
    ).toEqual([]);
  });

  it('has the summary, a timeline per sandbox, the verdict and how to check it', () => {
    const page = html();
    expect(page).toContain('✔ Verified: 31 entries');
    for (const sb of ['sb-alpha', 'sb-beta', 'sb-gamma', '(no sandbox)']) expect(page).toContain(`Sandbox ${esc(sb)}`);
    expect(page).toContain('openssl pkeyutl -verify -rawin');
    expect(page).toContain(esc(full.publicKey.vkey));
  });
});

describe.skipIf(!hasPython)('without Warden: the auditor script', () => {
  it('accepts the genuine bundles', () => {
    for (const b of [full, exportBundle(l, { sandboxId: 'sb-beta' })]) {
      const r = python(b, '--key', b.publicKey.vkey);
      expect(r.out).toMatch(/^OK: /m);
      expect(r.code).toBe(0);
    }
  });

  it.each(tamper.filter(([what]) => !what.includes('PEM')))('rejects a bundle with %s', (_what, change) => {
    const b = clone(full);
    change(b);
    const r = python(b, '--key', full.publicKey.vkey);
    expect(r.out).toMatch(/^FAIL: /m);
    expect(r.code).toBe(1);
  });

  it('checks with --previous that a log extends an earlier bundle, and catches the fork', () => {
    const { before, after, fork } = history!;
    const prev = (b: ReportBundle) => {
      const file = join(t.dir, `prev-${b.checkpoint.size}.json`);
      writeFileSync(file, JSON.stringify(b));
      return file;
    };
    expect(python(after, '--key', after.publicKey.vkey, '--previous', prev(before)).code).toBe(0);
    const forked = python(fork, '--key', fork.publicKey.vkey, '--previous', prev(after));
    expect(forked.out).toMatch(/^FAIL: entry 1: checkpoint mismatch/m);
    expect(forked.code).toBe(1);
  });

  it("implements RFC 8785 numbers exactly (Appendix B vectors, via the script's es_number)", () => {
    const bits = [
      '0000000000000000',
      '8000000000000000',
      '0000000000000001',
      '8000000000000001',
      '7fefffffffffffff',
      'ffefffffffffffff',
      '4340000000000000',
      'c340000000000000',
      '4430000000000000',
      '44b52d02c7e14af5',
      '44b52d02c7e14af6',
      '44b52d02c7e14af7',
      '444b1ae4d6e2ef4e',
      '444b1ae4d6e2ef4f',
      '444b1ae4d6e2ef50',
      '3eb0c6f7a0b5ed8c',
      '3eb0c6f7a0b5ed8d',
      '41b3de4355555553',
      '41b3de4355555554',
      '41b3de4355555555',
      '41b3de4355555556',
      '41b3de4355555557',
      'becbf647612f3696',
      '43143ff3c1cb0959',
    ];
    const code = `import sys, struct, json; sys.path.insert(0, sys.argv[1]); import verify_bundle as v
print(json.dumps([v.es_number(struct.unpack('>d', bytes.fromhex(b))[0]) for b in sys.argv[2:]]))`;
    const out = JSON.parse(execFileSync('python3', ['-c', code, join(SCRIPT, '..'), ...bits], { encoding: 'utf8' })) as string[];
    const expected = bits.map((b) => {
      const view = new DataView(new ArrayBuffer(8));
      view.setBigUint64(0, BigInt(`0x${b}`));
      return JSON.stringify(view.getFloat64(0));
    });
    expect(out).toEqual(expected);
  });

  it.skipIf(!has('jq'))('the README recipe checks the signature and a leaf with jq, sha256sum and openssl alone', () => {
    const file = join(t.dir, 'recipe.json');
    writeFileSync(file, JSON.stringify(exportBundle(l, { fromSeq: 1, toSeq: 3 })));
    const recipe = `set -e; cd "$(dirname "$1")"; b="$1"
jq -j .checkpoint.note "$b" > note
awk '/^$/{exit} {print}' note > body
tail -n 1 note | awk '{print $3}' | base64 -d | tail -c 64 > sig
jq -r .publicKey.spkiPem "$b" > key.pem
openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in body -sigfile sig
{ printf '\\0'; jq -jcS '.entries[1] | {actor, kind, payload, prev_hash: .prevHash, sandbox_id: .sandboxId, seq, time}' "$b"; } | sha256sum | cut -d' ' -f1
jq -r '.entries[1].hash' "$b"`;
    const out = execFileSync('bash', ['-c', recipe, 'recipe', file], { encoding: 'utf8' }).trim().split('\n');
    expect(out[0]).toBe('Signature Verified Successfully');
    expect(out[1]).toBe(out[2]);
  });
});
