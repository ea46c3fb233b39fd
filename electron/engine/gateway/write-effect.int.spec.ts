// Approval that shows the effect, on real Podman and a real ledger: an agent's write under a path rule
// `ask` waits for a person with the diff it would make (the file in the sandbox now against the bytes
// sent); the decision's ledger entry carries the sha256 of exactly that text; and a file changed
// behind the prompt's back is not overwritten by an approval given for another diff.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalDecision, ApprovalInfo } from '../../../shared/types/run.js';
import { closeTestWarden, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import { TEST_LABEL_KEY } from '../../test-support/test-label.js';
import { Gateway, type AgentContext } from './gateway.js';
import { loadPolicy } from './policy-load.js';

let w: TestWarden | undefined;
let gateway: Gateway | undefined;
let box = '';
const bot: AgentContext = { agent: 'writer', runKey: null };
const user: AgentContext = { agent: 'user', trusted: true, runKey: null };
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

beforeAll(async () => {
  w = await openTestWarden();
  const { policy } = loadPolicy(w.t.home);
  gateway = new Gateway(w.engine, w.warden.audit, {
    policy: { ...policy, paths: [...policy.paths, { path: '/workspace/src', access: 'ask' }], approvals: { timeoutMs: 60_000 } },
  });
  box = (await gateway.createSandbox(bot, { name: `t-${w.t.runId}-effect`, labels: { [TEST_LABEL_KEY]: w.t.runId } })).name;
});
afterAll(async () => {
  gateway?.close();
  await closeTestWarden(w);
});

/** Starts the agent's write and answers its approval once it is asked, with what the approval carried. */
async function writeAsked(path: string, data: string | Buffer, decision: ApprovalDecision, before?: () => Promise<void>) {
  const g = gateway!;
  let asked!: (a: ApprovalInfo) => void;
  const requested = new Promise<ApprovalInfo>((resolve) => (asked = resolve));
  const off = w!.engine.events.on('approval.requested', asked);
  const write = g.files.write(bot, box, path, Buffer.from(data)).then(
    (v) => ({ ok: v }),
    (err: unknown) => ({ err: err as { code: string; message: string } }),
  );
  const approval = await requested;
  off();
  await before?.();
  g.approvals.decide(approval.id, decision, 'tester');
  const outcome = await write;
  const entry = w!.ledger
    .entries({ kind: 'approval.decided' })
    .find((e) => (e.payload as { approvalId: string }).approvalId === approval.id);
  return { approval, outcome, payload: entry!.payload as { effect?: { sha256: string; path: string; before: unknown; after: unknown } } };
}

async function contents(path: string): Promise<string> {
  return (await gateway!.files.read(user, box, path)).toString('utf8');
}

describe('approval that shows the effect', () => {
  it('shows a change to a text file as its diff and binds that text’s digest in the decision', async () => {
    await gateway!.files.write(user, box, 'src/app.py', Buffer.from('import os\nx = 1\nprint(x)\n'));
    const { approval, outcome, payload } = await writeAsked('src/app.py', 'import os\nx = 2\nprint(x)\n', 'approve-once');
    expect(approval.tool).toBe('file.write');
    expect(approval.effect).toMatchObject({ path: '/workspace/src/app.py', kind: 'text', linesAdded: 1, linesRemoved: 1 });
    expect(approval.effect!.text).toBe('--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n import os\n-x = 1\n+x = 2\n print(x)\n');
    expect(approval.effect!.sha256).toBe(sha256(approval.effect!.text));
    expect(approval.effect!.before).toEqual({ size: 25, sha256: sha256('import os\nx = 1\nprint(x)\n') });
    expect(approval.effect!.after).toEqual({ size: 25, sha256: sha256('import os\nx = 2\nprint(x)\n') });
    expect(outcome).toHaveProperty('ok');
    expect(payload.effect?.sha256).toBe(sha256(approval.effect!.text));
    expect(payload.effect?.path).toBe('/workspace/src/app.py');
    expect(await contents('src/app.py')).toBe('import os\nx = 2\nprint(x)\n');
    // The call in the run carries the digest too; the whole chain still verifies.
    const run = gateway!.runs.detail(approval.runId);
    expect(run.toolCalls.find((c) => c.id === approval.callId)?.digests.effect).toBe(approval.effect!.sha256);
    expect(w!.ledger.verify().ok).toBe(true);
  });

  it('shows a new file as all added, and a binary one as sizes and digests; a denial binds the digest too', async () => {
    const made = await writeAsked('src/new/notes.md', 'one\ntwo\n', 'approve-once');
    expect(made.approval.effect?.text).toBe('--- /dev/null\n+++ b/src/new/notes.md\n@@ -0,0 +1,2 @@\n+one\n+two\n');
    expect(made.approval.effect?.before).toBeNull();
    expect(made.payload.effect?.sha256).toBe(sha256(made.approval.effect!.text));
    expect(await contents('src/new/notes.md')).toBe('one\ntwo\n');

    const bytes = Buffer.from([0, 1, 2, 255, 0, 7]);
    const bin = await writeAsked('src/tool.bin', bytes, 'deny');
    expect(bin.approval.effect?.kind).toBe('summary');
    expect(bin.approval.effect?.text).toContain('binary, no text diff');
    expect(bin.approval.effect?.text).toContain(`proposed: 6 bytes, sha256 ${sha256(bytes)}`);
    expect(bin.outcome).toMatchObject({ err: { code: 'E_POLICY_DENIED' } });
    expect(bin.payload.effect?.sha256).toBe(sha256(bin.approval.effect!.text));
    await expect(contents('src/tool.bin')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
  });

  it('refuses an approved write over a file that changed after its diff was shown', async () => {
    await gateway!.files.write(user, box, 'src/conf.txt', Buffer.from('safe=1\n'));
    const { approval, outcome } = await writeAsked('src/conf.txt', 'safe=0\n', 'approve-once', async () => {
      // Behind the prompt's back: the file is no longer what the diff was made against.
      const r = await gateway!.exec(user, box, { cmd: "printf 'safe=1\\nextra=1\\n' > /workspace/src/conf.txt" });
      expect(r.exitCode).toBe(0);
    });
    expect(approval.effect?.text).toContain('-safe=1\n+safe=0\n');
    expect(outcome).toMatchObject({ err: { code: 'E_CONFLICT' } });
    expect(await contents('src/conf.txt')).toBe('safe=1\nextra=1\n');
  });

  it('asks before a removal too (a summary, no diff); denied, the file stays', async () => {
    const g = gateway!;
    let asked!: (a: ApprovalInfo) => void;
    const requested = new Promise<ApprovalInfo>((resolve) => (asked = resolve));
    const off = w!.engine.events.on('approval.requested', asked);
    const removal = g.files.remove(bot, box, 'src/app.py').catch((err: unknown) => err);
    const approval = await requested;
    off();
    expect(approval).toMatchObject({ tool: 'file.remove', summary: 'remove /workspace/src/app.py' });
    expect(approval.effect).toBeUndefined();
    g.approvals.decide(approval.id, 'deny', 'tester');
    expect(await removal).toMatchObject({ code: 'E_POLICY_DENIED' });
    expect(await contents('src/app.py')).toBe('import os\nx = 2\nprint(x)\n');
  });

  it('asks only for changes: reads under an ask rule pass, and the user is never asked', async () => {
    expect((await gateway!.files.read(bot, box, 'src/app.py')).toString()).toBe('import os\nx = 2\nprint(x)\n');
    await gateway!.files.write(user, box, 'src/app.py', Buffer.from('by the user\n'));
    expect(await contents('src/app.py')).toBe('by the user\n');
  });
});
