// An entry's inclusion proof, checked in the page against a real `warden serve`: a deep link opens the
// entry, the page recomputes the leaf, walks the audit path, checks the checkpoint's Ed25519 signature
// with WebCrypto and says ok with the checkpoint's size, root and key. Then the server lies (its
// answers rewritten on the socket): a wrong path, a wrong root, a forged signature, another key, a
// changed entry — and the page says failed, naming why.
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { test, expect } from '../fixtures/test.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';
import type { WardenServe } from '../fixtures/warden-serve.js';
import { AppPage } from '../pages/app-page.js';
import { LedgerPage } from '../pages/ledger-page.js';

const root = resolve(import.meta.dirname, '../..');

async function activity(serve: WardenServe, name: string, runId: string): Promise<void> {
  const token = readFileSync(join(serve.home, 'user.token'), 'utf8').trim();
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${serve.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.ok, `${path}: ${res.status} ${await res.text()}`).toBe(true);
  };
  await call('/v1/sandboxes', { name, labels: { [TEST_LABEL_KEY]: runId } });
  await call(`/v1/sandboxes/${name}/exec`, { cmd: ['echo', 'proof me'] });
}

/** Signs a checkpoint now with the CLI (another process, as an operator would). */
function checkpointNow(serve: WardenServe): number {
  const r = spawnSync(process.execPath, [join(root, 'bin/warden.mjs'), 'audit', 'checkpoint', '--json'], {
    cwd: root,
    env: { ...process.env, WARDEN_HOME: serve.home, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { size: number }).size;
}

type Lie = 'none' | 'path' | 'root' | 'signature' | 'key' | 'entry' | 'unsigned';
type Proof = {
  entry: { seq: number; actor: string; hash: string };
  checkpoint: { note: string; time: string } | null;
  inclusion: { treeSize: number; path: string[] } | null;
  vkey: string;
};

/** Signs a C2SP note with a key of the attacker's (name+keyid+signature, as the ledger's format). */
function attackerNote(text: string): { note: string; vkey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const keyId = createHash('sha256')
    .update('mallory\n')
    .update(Buffer.from([1]))
    .update(raw)
    .digest()
    .subarray(0, 4);
  const sig = sign(null, Buffer.from(text), privateKey);
  return {
    note: `${text}\n\u2014 mallory ${Buffer.concat([keyId, sig]).toString('base64')}\n`,
    vkey: `mallory+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([1]), raw]).toString('base64')}`,
  };
}

const flipHex = (h: string) => (h[0] === '0' ? '1' : '0') + h.slice(1);

function lieAbout(p: Proof, lie: Lie): Proof {
  const note = p.checkpoint?.note ?? '';
  const text = note.slice(0, note.lastIndexOf('\n\n') + 1);
  switch (lie) {
    case 'path':
      return { ...p, inclusion: { ...p.inclusion!, path: [flipHex(p.inclusion!.path[0]!), ...p.inclusion!.path.slice(1)] } };
    case 'root': {
      const [origin, size] = text.split('\n');
      const forged = `${origin}\n${size}\n${Buffer.alloc(32, 7).toString('base64')}\n`;
      return { ...p, checkpoint: { ...p.checkpoint!, note: note.replace(text, forged) } };
    }
    case 'signature': {
      const sigLine = note.slice(note.lastIndexOf('\n\n') + 2);
      const b64 = sigLine.trim().split(' ')[2]!;
      const blob = Buffer.from(b64, 'base64');
      blob[20]! ^= 1;
      return { ...p, checkpoint: { ...p.checkpoint!, note: note.replace(b64, blob.toString('base64')) } };
    }
    case 'key': {
      const forged = attackerNote(text);
      return { ...p, vkey: forged.vkey, checkpoint: { ...p.checkpoint!, note: forged.note } };
    }
    case 'entry':
      return { ...p, entry: { ...p.entry, actor: `${p.entry.actor}-forged` } };
    case 'unsigned':
      return { ...p, checkpoint: null, inclusion: null };
    default:
      return p;
  }
}

/** Rewrites the server's answers to `ledger.proof` (and, for a changed entry, `ledger.entries`) on the socket. */
async function lyingSocket(page: Page, lie: () => Lie): Promise<void> {
  await page.routeWebSocket(/\/ui\/ws$/, (ws) => {
    const server = ws.connectToServer();
    const calls = new Map<number, string>();
    ws.onMessage((m) => {
      if (typeof m === 'string') {
        const req = JSON.parse(m) as { t: string; id?: number; method?: string };
        if (req.t === 'call' && req.id !== undefined && req.method) calls.set(req.id, req.method);
      }
      server.send(m);
    });
    server.onMessage((m) => {
      if (typeof m !== 'string') return ws.send(m);
      const msg = JSON.parse(m) as { t: string; id: number; envelope?: { result?: unknown } };
      const method = msg.t === 'result' ? calls.get(msg.id) : undefined;
      const result = msg.envelope?.result;
      if (method === 'ledger.proof' && result) msg.envelope!.result = lieAbout(result as Proof, lie());
      if (method === 'ledger.entries' && result && lie() === 'entry') {
        const page = result as { entries: Array<{ actor: string }> };
        page.entries = page.entries.map((e) => ({ ...e, actor: `${e.actor}-forged` }));
      }
      ws.send(method ? JSON.stringify(msg) : m);
    });
  });
}

test.describe('inclusion proofs checked in the page', () => {
  test('a deep link opens an entry; its proof checks out against the signed checkpoint', async ({ app, serve, runId }) => {
    const ledger = new LedgerPage(app.page);
    await activity(serve, `${runId}-proof`, runId);
    const size = checkpointNow(serve);
    await ledger.open();
    const seq = Math.max(1, size - 1);
    // A link as the timelines make it: the entry opens, highlighted, with its proof.
    await app.page.goto(`${serve.url}/#ledger?seq=${seq}`);
    await expect(ledger.details(seq)).toBeVisible();
    await expect(ledger.row(seq)).toBeInViewport();
    // Highlighted as the link's target, not as a bad entry.
    await expect(ledger.row(seq)).toHaveAttribute('data-linked', 'true');
    await expect(ledger.row(seq)).not.toHaveAttribute('data-bad', 'true');
    expect(await ledger.proofStatus(seq)).toBe('ok');
    const proof = ledger.proof(seq);
    await expect(proof).toContainText(`entry #${seq} is in the signed log`);
    const shownSize = Number((await proof.getByTestId('proof-size').innerText()).replace(/\D/g, ''));
    expect(shownSize).toBeGreaterThanOrEqual(size);
    await expect(proof.getByTestId('proof-root')).toHaveAttribute('title', /^[0-9a-f]{64}$/);
    // The key the page checked the signature with is the one the header and `warden audit` name.
    const fingerprint = await proof.getByTestId('proof-fingerprint').getAttribute('title');
    await expect(ledger.key).toHaveAttribute('title', new RegExp(fingerprint!));
    expect(new URL(app.page.url()).hash).toBe(''); // the link is consumed: following it again opens it again
    await app.page.mouse.move(0, 0);
    await app.screenshot('ledger-proof');

    // The newest entry: if it is past the latest checkpoint the page says so and offers to sign one.
    await activity(serve, `${runId}-proof2`, runId);
    const back = ledger.view.getByRole('button', { name: 'Back to the newest' });
    if (await back.count()) await back.click();
    const newest = await ledger.entryCount();
    await expect(ledger.row(newest)).toBeVisible();
    await ledger.row(newest).click();
    if ((await ledger.proofStatus(newest)) === 'pending') {
      await expect(ledger.proof(newest)).toContainText('newer than the latest signed checkpoint');
      await app.screenshot('ledger-proof-pending');
      await ledger.proof(newest).getByTestId('proof-sign').click();
    }
    await expect(ledger.proof(newest)).toHaveAttribute('data-status', 'ok');
    const signed = Number((await ledger.proof(newest).getByTestId('proof-size').innerText()).replace(/\D/g, ''));
    expect(signed).toBeGreaterThanOrEqual(newest);
    // The header follows: its latest checkpoint is the one the proof was checked against (or newer).
    await expect(app.page.getByTestId('ledger-checkpoint')).toContainText(/\d/);
    const header = Number((await app.page.getByTestId('ledger-checkpoint').innerText()).split('entries')[0]!.replace(/\D/g, ''));
    expect(header).toBeGreaterThanOrEqual(signed);
  });

  test('a lying server: wrong path, wrong root, forged signature, other key, changed entry — each fails, named', async ({
    app,
    serve,
    runId,
    browser,
  }) => {
    await activity(serve, `${runId}-liar`, runId);
    const size = checkpointNow(serve);
    let lie: Lie = 'none';
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await lyingSocket(page, () => lie);
      const other = new AppPage(page, serve, runId);
      await other.signIn();
      const ledger = new LedgerPage(page);
      await ledger.open();
      const seq = size;
      await page.goto(`${serve.url}/#ledger?seq=${seq}`);
      expect(await ledger.proofStatus(seq)).toBe('ok'); // honest first: this browser pins the key it saw
      const expected: Array<[Lie, string, RegExp]> = [
        ['path', 'root mismatch', /audit path leads to root/],
        ['root', 'bad signature', /does not verify/],
        ['signature', 'bad signature', /does not verify/],
        ['key', 'bad key', /not the trusted key/],
        ['unsigned', 'pending', /none signed yet/],
      ];
      for (const [what, reason, detail] of expected) {
        lie = what;
        await ledger.proof(seq).getByTestId('proof-recheck').click();
        const status = ledger.proof(seq);
        if (reason === 'pending') await expect(status).toHaveAttribute('data-status', 'pending');
        else {
          await expect(status, what).toHaveAttribute('data-reason', reason);
          await expect(status).toHaveAttribute('data-status', 'failed');
          await expect(status).toContainText(`Proof failed: ${reason}`);
        }
        await expect(status).toContainText(detail);
        if (what === 'path') await other.screenshot('ledger-proof-failed');
      }
      // A changed entry, the list and the proof telling the same lie: its fields no longer hash to its hash.
      lie = 'entry';
      await page.goto(`${serve.url}/#ledger?seq=${seq - 1}`);
      await expect(ledger.proof(seq - 1)).toHaveAttribute('data-reason', 'hash mismatch');
      await expect(ledger.proof(seq - 1)).toContainText('it was changed');
    } finally {
      await page.close();
    }
    void app; // its teardown sweeps this test's sandboxes
  });
});
