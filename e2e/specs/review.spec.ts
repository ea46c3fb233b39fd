// Reviewing what an agent did to a sandbox, from its detail view, against real `warden serve` and
// Podman: the sandbox's whole workspace diff (unified and side by side, text never HTML); a snapshot,
// a change, and a reset from the view that brings the file back (then a fork and a removal); and an
// agent's write under a path rule `ask`, whose prompt shows the diff it would make and whose
// decision's ledger entry carries the digest of exactly the text shown.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test, expect } from '../fixtures/test.js';
import { HttpAgent } from '../fixtures/agent.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';
import { ASK_PATH } from '../fixtures/policy.js';
import { ReviewPage } from '../pages/review-page.js';
import { RunsPage } from '../pages/runs-page.js';

const root = resolve(import.meta.dirname, '../..');

/** The CLI against the suite's running `warden serve`, as the user. */
function warden(home: string, args: string[]): string {
  return execFileSync(process.execPath, [resolve(root, 'bin/warden.mjs'), ...args], {
    cwd: root,
    env: { ...process.env, WARDEN_HOME: home, NO_COLOR: '1' },
    encoding: 'utf8',
  });
}

test.describe('review a sandbox', () => {
  test('the Changes tab shows the sandbox’s whole workspace diff, unified or side by side, as text', async ({ app, serve, runId }) => {
    const review = new ReviewPage(app.page);
    const agent = HttpAgent.create(serve, `${runId}-editor`);
    const box = await agent.createSandbox({ name: `${runId}-diff-box`, labels: { [TEST_LABEL_KEY]: runId } });
    const setup = "printf 'a = 1\\nb = 2\\nc = 3\\n' > conf.py && printf 'gone\\n' > old.txt";
    expect((await agent.exec(box.id, ['sh', '-c', setup])).exit?.code).toBe(0);
    // A second command (another run's worth of work): the sandbox's diff holds both.
    const change =
      "printf 'a = 1\\nb = 20\\nc = 3\\n' > conf.py && rm old.txt && printf '<img src=x onerror=alert(1) id=\"inj\">\\n' > page.html";
    expect((await agent.exec(box.id, ['sh', '-c', change])).exit?.code).toBe(0);

    await app.sandboxes.open(box.name);
    await review.tab('changes');
    await expect(review.changes.getByTestId('sandbox-changes-totals')).toContainText('2 added, 0 modified, 0 deleted');
    await expect(review.diff('conf.py')).toHaveText('--- /dev/null\n+++ b/conf.py\n@@ -0,0 +1,3 @@\n+a = 1\n+b = 20\n+c = 3\n');
    await expect(review.diff('page.html')).toContainText('+<img src=x onerror=alert(1) id="inj">');
    await expect(app.page.locator('#inj')).toHaveCount(0);
    await app.screenshot('sandbox-changes');

    await app.page.getByTestId('sandbox-changes-layout-split').click();
    await expect(review.split('conf.py')).toContainText('b = 20');
    await expect(review.split('conf.py').locator('td.diff-add')).toHaveCount(3);
    await app.screenshot('sandbox-changes-split');
    // Back to the shell: the terminal was kept meanwhile.
    await review.tab('shell');
    await expect(app.detail.terminal).toBeVisible();
  });

  test('snapshot, change a file, reset from the detail view: the file comes back; then fork and remove', async ({ app, serve, runId }) => {
    const review = new ReviewPage(app.page);
    const agent = HttpAgent.create(serve, `${runId}-snapper`);
    const name = `${runId}-snap-box`;
    const box = await agent.createSandbox({ name, labels: { [TEST_LABEL_KEY]: runId } });
    await agent.writeFile(box.id, 'keep.txt', 'the original\n');

    await app.sandboxes.open(name);
    await review.tab('snapshots');
    await expect(review.snapshots.getByTestId('snapshots-empty')).toBeVisible();
    // A tag the engine would refuse is refused here first, and says why.
    await review.tagInput.fill('bad tag!');
    await expect(review.tagInput).toHaveAttribute('aria-invalid', 'true');
    await expect(app.page.getByTestId('snapshot-take')).toBeDisabled();
    await review.take('before');
    await expect(review.done).toContainText('Snapshot before taken');
    await expect(review.row('before')).toContainText(/\d/);
    await app.screenshot('sandbox-snapshots');

    await agent.writeFile(box.id, 'keep.txt', 'overwritten by the agent\n');
    expect((await agent.exec(box.id, ['sh', '-c', 'echo junk > extra.txt'])).exit?.code).toBe(0);

    const reset = await review.ask('reset', 'before');
    await expect(reset).toContainText('What will be lost');
    await expect(reset).toContainText('every change since then');
    await app.screenshot('sandbox-reset-confirm');
    const oldId = await app.page.getByTestId('sandbox-detail').locator('.view-head .mono').first().textContent();
    await reset.getByTestId('confirm-snapshot-reset').click();
    await expect(review.progress).toContainText(`Resetting ${name} to before`);
    await app.screenshot('sandbox-reset-progress');
    await expect(review.done).toContainText(`${name} is back at before`, { timeout: 90_000 });
    await expect(review.error).toHaveCount(0);
    // The same name, a new container, the file as it was, the agent's extra file gone.
    await expect(app.page.locator('#detail-title')).toHaveText(name);
    await expect(app.page.getByTestId('sandbox-detail').locator('.view-head .mono').first()).not.toHaveText(oldId ?? '');
    expect(await agent.readFile(name, 'keep.txt')).toBe('the original\n');
    expect((await agent.exec(name, ['sh', '-c', 'test -e extra.txt && echo there || echo gone'])).stdout).toBe('gone\n');
    await app.screenshot('sandbox-reset-done');

    // Fork: the name is checked before anything is asked of the engine.
    const fork = await review.ask('fork', 'before');
    await fork.getByTestId('fork-name').fill('-no');
    await expect(fork.getByTestId('confirm-snapshot-fork')).toBeDisabled();
    await fork.getByTestId('fork-name').fill(`${name}-fork`);
    await fork.getByTestId('confirm-snapshot-fork').click();
    await expect(review.done).toContainText(`Forked ${name}-fork from before`, { timeout: 90_000 });
    expect(await agent.readFile(`${name}-fork`, 'keep.txt')).toBe('the original\n');

    // A failure is shown in the view: a fork under a name that is taken.
    const again = await review.ask('fork', 'before');
    await again.getByTestId('fork-name').fill(`${name}-fork`);
    await again.getByTestId('confirm-snapshot-fork').click();
    await expect(review.error).toBeVisible({ timeout: 60_000 });
    await app.screenshot('sandbox-snapshot-error');

    // The snapshot's image is in use by the reset sandbox and the fork: removing it is refused until they are gone.
    const remove = await review.ask('remove', 'before');
    await remove.getByTestId('confirm-snapshot-remove').click();
    await expect(review.error).toContainText(/in use|runs on|used by|cannot be removed/i, { timeout: 60_000 });
    await expect(review.row('before')).toBeVisible();

    // One no sandbox runs on goes.
    await review.take('spare');
    const spare = await review.ask('remove', 'spare');
    await expect(spare).toContainText('can no longer be reset');
    await spare.getByTestId('confirm-snapshot-remove').click();
    await expect(review.done).toContainText('Snapshot spare removed', { timeout: 60_000 });
    await expect(review.row('spare')).toHaveCount(0);

    // Leave no image behind: the sandboxes made from `before` go first, then the snapshot (kept by name).
    await agent.destroySandbox(`${name}-fork`);
    await agent.destroySandbox(name);
    warden(serve.home, ['sandbox', 'snapshot-rm', name, 'before']);
  });

  test('an ask on a file write shows the diff it would make; approved, the file is written and the ledger binds that diff', async ({
    app,
    serve,
    runId,
  }) => {
    const runs = new RunsPage(app.page);
    const agent = HttpAgent.create(serve, `${runId}-proposer`);
    const box = await agent.createSandbox({ name: `${runId}-ask-write`, labels: { [TEST_LABEL_KEY]: runId } });
    const path = `${ASK_PATH}/settings.ini`;
    // Made with an exec (not the file API, which would ask): the file the diff is against.
    const seed = `mkdir -p ${ASK_PATH} && printf '[main]\\nretries = 3\\ndebug = off\\n' > ${path}`;
    expect((await agent.exec(box.id, ['sh', '-c', seed])).exit?.code).toBe(0);
    await app.page.getByTestId('nav-sandboxes').click();

    const write = agent.writeFile(box.id, path, '[main]\nretries = 5\ndebug = off\n');
    const prompt = runs.approval(`write /workspace/${path}`);
    await expect(prompt).toBeVisible();
    const expected = `--- a/${path}\n+++ b/${path}\n@@ -1,3 +1,3 @@\n [main]\n-retries = 3\n+retries = 5\n debug = off\n`;
    const shown = prompt.getByTestId('approval-effect-text');
    await expect(shown).toHaveText(expected);
    const shownText = (await shown.textContent()) ?? '';
    const digest = createHash('sha256').update(shownText).digest('hex');
    await expect(prompt.getByTestId('approval-effect-digest')).toHaveAttribute('title', new RegExp(`${digest}$`));
    await app.screenshot('approval-write-diff');

    await runs.answer(prompt, 'approve-once');
    expect((await write).sha256).toBe(createHash('sha256').update('[main]\nretries = 5\ndebug = off\n').digest('hex'));
    expect(await agent.readFile(box.id, path)).toBe('[main]\nretries = 5\ndebug = off\n');

    // The decision's entry carries the digest of exactly the text that was on screen.
    const log = warden(serve.home, ['audit', 'log', '--sandbox', box.name, '--kind', 'approval.decided', '--json']);
    const entries = JSON.parse(log) as Array<{ payload: { status: string; effect?: { sha256: string; path: string } } }>;
    expect(entries).toHaveLength(1);
    expect(entries[0]!.payload.status).toBe('approved');
    expect(entries[0]!.payload.effect).toMatchObject({ sha256: digest, path: `/workspace/${path}` });
  });
});
