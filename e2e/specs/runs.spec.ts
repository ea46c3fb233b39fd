// Agents' runs, watched live: an agent script drives the HTTP API while the Runs view follows it call
// by call, and `ask` prompts reach the user on whatever view they are on.
import { test, expect } from '../fixtures/test.js';
import { HttpAgent } from '../fixtures/agent.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';
import { ASK_ARG_PREFIX, ASK_REASON, QUICK_APPROVAL_TIMEOUT_MS, QUICK_SANDBOX_MARK } from '../fixtures/policy.js';
import { RunsPage } from '../pages/runs-page.js';

test.describe('runs', () => {
  test('an agent’s run appears call by call with decisions, exit codes and output streaming in', async ({ app, serve, runId }) => {
    const runs = new RunsPage(app.page);
    const agent = HttpAgent.create(serve, `${runId}-builder`);
    await runs.open();
    await expect(runs.count).not.toHaveText('loading…');
    // (The first spec of a worker finds no runs yet: the empty state says how to start one.)
    if (await runs.empty.isVisible()) await app.screenshot('runs-empty');

    const box = await agent.createSandbox({ name: `${runId}-agent-box`, labels: { [TEST_LABEL_KEY]: runId } });
    await expect(runs.row(agent.name)).toBeVisible();
    await expect(runs.row(agent.name)).toHaveAttribute('data-sandbox', box.name);
    await runs.select(agent.name);
    const create = runs.call(1);
    await expect(create).toHaveAttribute('data-status', 'ok');
    await expect(create).toHaveAttribute('data-tool', 'sandbox.create');
    await expect(create.getByTestId('call-target')).toHaveText(box.name);

    // 2: a quick exec — the decision (the default rule) and its exit code
    let r = await agent.exec(box.id, ['sh', '-c', 'echo hello from the agent; uname -s']);
    expect(r.exit?.code).toBe(0);
    const hello = runs.call(2);
    await expect(hello).toHaveAttribute('data-status', 'ok');
    await expect(hello.getByTestId('call-target')).toHaveText("sh -c 'echo hello from the agent; uname -s'");
    await expect(hello.getByTestId('call-decision')).toHaveAttribute('data-action', 'allow');
    await expect(hello.getByTestId('call-decision')).toContainText('default');
    await expect(hello.getByTestId('call-exit')).toHaveText('exit 0');
    await expect(hello.getByTestId('call-output')).toContainText('hello from the agent\nLinux');
    await expect(hello.getByTestId('call-ledger')).toHaveAttribute('data-seqs', /^\d+,\d+,\d+$/);

    // 3: a slow exec — its first line is on screen while it still runs
    const slow = agent.exec(box.id, 'echo step-one; sleep 3; echo step-two');
    const streaming = runs.call(3);
    await expect(streaming).toHaveAttribute('data-status', 'running');
    await expect(streaming.getByTestId('call-output')).toContainText('step-one');
    await expect(streaming).toHaveAttribute('data-status', 'running');
    await expect(streaming.getByTestId('call-output')).not.toContainText('step-two');
    r = await slow;
    expect(r.stdout).toBe('step-one\nstep-two\n');
    await expect(streaming).toHaveAttribute('data-status', 'ok');
    await expect(streaming.getByTestId('call-output')).toContainText('step-one\nstep-two');
    // At least the 3 s it slept; a loaded machine may add any amount (run-format.ts: "3.4 s" under 10 s, "12 s" under a minute).
    await expect(streaming.getByTestId('call-duration')).toHaveText(/^(?:[3-9]\.\d|[1-5]\d) s$/);

    // 4: a failing exec, with stderr
    r = await agent.exec(box.id, ['sh', '-c', 'echo no such thing >&2; exit 3']);
    expect(r.exit?.code).toBe(3);
    const failing = runs.call(4);
    await expect(failing).toHaveAttribute('data-status', 'failed');
    await expect(failing.getByTestId('call-exit')).toHaveText('exit 3');
    await expect(failing.getByTestId('call-output').locator('.stderr')).toHaveText('no such thing\n');
    await expect(runs.row(agent.name).getByTestId('run-failures')).toHaveText('1 failed');
    await expect(runs.gauge('breaker')).toHaveAttribute('data-value', '1');

    // 5, 6: a file written and read back
    await agent.writeFile(box.id, 'notes/plan.txt', 'step 1: <b>not html</b>\n');
    await expect(runs.call(5)).toHaveAttribute('data-status', 'ok');
    await expect(runs.call(5).getByTestId('call-target')).toHaveText('notes/plan.txt');
    await expect(runs.call(5)).toHaveAttribute('data-tool', 'file.write');
    expect(await agent.readFile(box.id, '/workspace/notes/plan.txt')).toBe('step 1: <b>not html</b>\n');
    await expect(runs.call(6)).toHaveAttribute('data-tool', 'file.read');
    await expect(runs.call(6)).toHaveAttribute('data-status', 'ok');
    // a successful call closes the breaker's count again
    await expect(runs.gauge('breaker')).toHaveAttribute('data-value', '0');

    // 7: output is text, never markup
    await agent.exec(box.id, ['cat', 'notes/plan.txt']);
    await expect(runs.call(7).getByTestId('call-output')).toHaveText('step 1: <b>not html</b>\n');
    await expect(runs.detail.locator('b', { hasText: 'not html' })).toHaveCount(0);

    await expect(runs.calls()).toHaveCount(7);
    await expect(runs.row(agent.name).getByTestId('run-calls')).toHaveText('7 calls');
    await expect(runs.gauge('steps').getByTestId('gauge-steps-text')).toHaveText('7 / 2000');
    await expect(runs.detail.getByTestId('breaker-state')).toHaveAttribute('data-state', 'closed');
    await app.screenshot('runs-timeline');

    // The sandbox's own page lists the run and leads back to it.
    await app.page.getByTestId('nav-sandboxes').click();
    await app.sandboxes.open(box.name);
    const link = app.page.getByTestId('sandbox-run-link');
    await expect(link).toHaveCount(1);
    await expect(link).toContainText(agent.name);
    await expect(link).toContainText('7 calls');
    await link.click();
    await expect(runs.row(agent.name)).toHaveAttribute('aria-current', 'true');
    await expect(runs.calls()).toHaveCount(7);

    // Destroying the sandbox ends the run.
    await agent.destroySandbox(box.id);
    await expect(runs.row(agent.name)).toHaveAttribute('data-status', 'finished');
    await expect(runs.call(8)).toHaveAttribute('data-tool', 'sandbox.destroy');
  });

  test('an ask waits for a person on any view: approved, it runs; denied, the agent gets E_POLICY_DENIED', async ({
    app,
    serve,
    runId,
  }) => {
    const runs = new RunsPage(app.page);
    const agent = HttpAgent.create(serve, `${runId}-asker`);
    const box = await agent.createSandbox({ name: `${runId}-ask-box`, labels: { [TEST_LABEL_KEY]: runId } });
    await app.page.getByTestId('nav-sandboxes').click();
    await expect(app.sandboxes.row(box.name)).toBeVisible();

    // Approved once, from the keyboard.
    const approveMe = `${ASK_ARG_PREFIX}approve-me`;
    const approved = agent.exec(box.id, ['echo', approveMe]);
    const prompt = runs.approval(approveMe);
    await expect(prompt).toBeVisible();
    await expect(prompt).toContainText(agent.name);
    await expect(prompt).toContainText(box.name);
    await expect(prompt.getByTestId('approval-summary')).toHaveText(`exec echo ${approveMe}`);
    await expect(prompt.getByTestId('approval-reason')).toHaveText(ASK_REASON);
    await expect(prompt.getByTestId('approval-countdown')).toHaveText(/^0:[0-3]\d$/);
    await expect(runs.approvalsBadge).toHaveAttribute('data-count', '1');
    await expect(app.page.getByRole('heading', { name: 'Sandboxes' })).toBeVisible();
    await app.screenshot('approval-prompt');
    await app.page.keyboard.press('Alt+Shift+A');
    await expect(prompt).toBeFocused();
    // The whole command is a scrollable block, so it is the first stop (the keyboard can scroll it).
    await app.page.keyboard.press('Tab');
    await expect(prompt.getByTestId('approval-summary')).toBeFocused();
    await app.page.keyboard.press('Tab');
    await expect(prompt.getByTestId('approval-approve-once')).toBeFocused();
    await app.page.keyboard.press('Enter');
    const ok = await approved;
    expect(ok.status).toBe(200);
    expect(ok.events.map((e) => e.type)).toEqual(['approval', 'start', 'stdout', 'exit']);
    expect(ok.stdout).toBe(`${approveMe}\n`);
    expect(ok.exit?.code).toBe(0);
    await expect(prompt).toHaveCount(0);
    await expect(runs.approvalsBadge).toHaveCount(0);

    // Denied with a click, while the person is busy in a dialog: the prompt shows above it, the
    // exec never runs, and the dialog is left as it was.
    await app.sandboxes.openCreateDialog();
    const denyMe = `${ASK_ARG_PREFIX}deny-me`;
    const denied = agent.exec(box.id, ['echo', denyMe]);
    await expect(runs.approval(denyMe)).toBeVisible();
    await app.screenshot('approval-over-dialog');
    await runs.answer(runs.approval(denyMe), 'deny');
    await expect(app.sandboxes.dialog).toBeVisible();
    await app.sandboxes.dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(app.sandboxes.dialog).toHaveCount(0);
    const no = await denied;
    // The stream began (the agent was told it waits for a person), so the refusal is its last event.
    expect(no.status).toBe(200);
    expect(no.events.map((e) => e.type)).toEqual(['approval', 'error']);
    expect(no.error?.code).toBe('E_POLICY_DENIED');
    expect(no.error?.message).toContain('denied by user (web shell)');
    expect(no.stdout).toBe('');

    // Approved for the rest of the run: the same command does not ask again (the asking rule names
    // arguments, so the approval covers exactly this argv; another e2e-ask-… argument would ask).
    const forRun = agent.exec(box.id, ['echo', `${ASK_ARG_PREFIX}for-run`]);
    await runs.answer(runs.approval(`${ASK_ARG_PREFIX}for-run`), 'approve-run');
    expect((await forRun).stdout).toBe(`${ASK_ARG_PREFIX}for-run\n`);
    const again = await agent.exec(box.id, ['echo', `${ASK_ARG_PREFIX}for-run`]);
    expect(again.events[0]?.type).toBe('start');

    // The timeline keeps every answer: who, and what came of it.
    await runs.open();
    await runs.select(agent.name);
    const first = runs.call(2);
    await expect(first).toHaveAttribute('data-status', 'ok');
    await expect(first.getByTestId('call-decision')).toHaveAttribute('data-asked', 'true');
    await expect(first.getByTestId('call-decision')).toHaveAttribute('data-action', 'allow');
    await expect(first.getByTestId('call-decision')).toContainText(ASK_REASON);
    await expect(first.getByTestId('call-approval')).toHaveText(/^approved once by user \(web shell\) at \d\d:\d\d:\d\d$/);
    await expect(first.getByTestId('call-output')).toHaveText(`${approveMe}\n`);
    const second = runs.call(3);
    await expect(second).toHaveAttribute('data-status', 'denied');
    await expect(second.getByTestId('call-decision')).toHaveAttribute('data-action', 'deny');
    await expect(second.getByTestId('call-approval')).toHaveText(/^denied by user \(web shell\) at /);
    await expect(second.getByTestId('call-error')).toContainText('E_POLICY_DENIED');
    await expect(second.getByTestId('call-output')).toHaveCount(0);
    await expect(runs.call(4).getByTestId('call-approval')).toHaveText(/^approved for this run by user \(web shell\)/);
    await expect(runs.call(5).getByTestId('call-decision')).toHaveAttribute('data-asked', 'false');
    await expect(runs.call(5).getByTestId('call-decision')).toContainText(`approved for this run (echo ${ASK_ARG_PREFIX}for-run`);
    await app.screenshot('runs-approvals');
  });

  test('an ask nobody answers is denied at its deadline and its prompt goes away', async ({ app, serve, runId }) => {
    const runs = new RunsPage(app.page);
    const agent = HttpAgent.create(serve, `${runId}-waiter`);
    const box = await agent.createSandbox({ name: `${runId}${QUICK_SANDBOX_MARK}box`, labels: { [TEST_LABEL_KEY]: runId } });
    await runs.open();
    await runs.select(agent.name);
    const ask = `${ASK_ARG_PREFIX}nobody`;
    const started = Date.now();
    const unanswered = agent.exec(box.id, ['echo', ask]);
    const prompt = runs.approval(ask);
    await expect(prompt).toBeVisible();
    await expect(runs.call(2)).toHaveAttribute('data-status', 'awaiting-approval');
    await expect(runs.call(2).getByTestId('call-waiting')).toContainText('left');
    await expect(prompt).toHaveCount(0, { timeout: QUICK_APPROVAL_TIMEOUT_MS + 5_000 });
    const r = await unanswered;
    expect(Date.now() - started).toBeGreaterThanOrEqual(QUICK_APPROVAL_TIMEOUT_MS - 500);
    expect(r.error?.code).toBe('E_POLICY_DENIED');
    expect(r.error?.message).toContain('nobody approved');
    await expect(runs.call(2)).toHaveAttribute('data-status', 'denied');
    await expect(runs.call(2).getByTestId('call-approval')).toContainText('nobody answered');
  });

  test('the Changes tab shows what a run changed in /workspace, as text, never as HTML', async ({ app, serve, runId }) => {
    const runs = new RunsPage(app.page);
    const agent = HttpAgent.create(serve, `${runId}-changer`);
    const box = await agent.createSandbox({ name: `${runId}-changes-box`, labels: { [TEST_LABEL_KEY]: runId } });
    const r = await agent.exec(box.id, ['sh', '-c', "printf '<b id=\"injected\">bold</b>\\n' > page.html && printf 'x = 1\\n' > app.py"]);
    expect(r.exit?.code).toBe(0);
    await runs.open();
    await runs.select(agent.name);
    await app.page.getByTestId('run-tab-changes').click();
    const changes = app.page.getByTestId('run-changes');
    await expect(changes.getByTestId('run-changes-totals')).toContainText('2 added, 0 modified, 0 deleted');
    await expect(changes.locator('[data-testid="run-changes-diff"][data-path="app.py"]')).toHaveText(
      '--- /dev/null\n+++ b/app.py\n@@ -0,0 +1 @@\n+x = 1\n',
    );
    await expect(changes.locator('[data-testid="run-changes-diff"][data-path="page.html"]')).toContainText('+<b id="injected">bold</b>');
    await expect(app.page.locator('#injected')).toHaveCount(0);
    await app.screenshot('run-changes');
    await app.page.getByTestId('run-tab-calls').click();
    await expect(runs.call(1)).toBeVisible();
  });
});
