// Code written for E2B, pointed at `warden serve`, shows up in the Runs view like any agent: the real
// `e2b` SDK runs commands and writes a file while the view follows its run, and the screenshot shows it.
import { Sandbox } from 'e2b';
import { test, expect } from '../fixtures/test.js';
import { HttpAgent } from '../fixtures/agent.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';
import { RunsPage } from '../pages/runs-page.js';

const E2B_VARS = ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY'] as const;

test.describe('e2b', () => {
  const saved = E2B_VARS.map((name) => process.env[name]);
  test.afterEach(() => E2B_VARS.forEach((name, i) => (saved[i] === undefined ? delete process.env[name] : (process.env[name] = saved[i]))));

  test('an agent on the E2B SDK appears in the Runs view call by call', async ({ app, serve, runId }) => {
    const runs = new RunsPage(app.page);
    const agent = HttpAgent.create(serve, `${runId}-e2b`);
    // What `warden e2b env` prints: the door's URL for both planes, the agent's token as the key.
    process.env.E2B_API_URL = `${serve.url}/e2b`;
    process.env.E2B_SANDBOX_URL = `${serve.url}/e2b`;
    process.env.E2B_API_KEY = agent.token;
    await runs.open();

    const sbx = await Sandbox.create({ metadata: { [TEST_LABEL_KEY]: runId }, timeoutMs: 300_000 });
    try {
      await expect(runs.row(agent.name)).toBeVisible();
      await runs.select(agent.name);
      await expect(runs.call(1)).toHaveAttribute('data-tool', 'sandbox.create');

      expect((await sbx.commands.run('echo hello from e2b; uname -s')).stdout).toBe('hello from e2b\nLinux\n');
      await sbx.files.write('/home/user/plan.txt', 'step 1: write\nstep 2: count\n');
      expect((await sbx.commands.run('wc -l < plan.txt')).stdout.trim()).toBe('2');

      const hello = runs.calls().filter({ hasText: 'echo hello from e2b' });
      await expect(hello).toHaveAttribute('data-tool', 'exec');
      await expect(hello).toHaveAttribute('data-status', 'ok');
      await expect(hello.getByTestId('call-exit')).toHaveText('exit 0');
      await expect(hello.getByTestId('call-output')).toContainText('hello from e2b\nLinux');
      const write = runs.detail.locator('[data-testid="call"][data-tool="file.write"]');
      await expect(write).toHaveAttribute('data-status', 'ok');
      await expect(write.getByTestId('call-target')).toContainText('plan.txt');
      const count = runs.calls().filter({ hasText: 'wc -l' });
      await expect(count).toHaveAttribute('data-status', 'ok');
      await expect(count.getByTestId('call-output')).toContainText('2');
      await expect(runs.detail.getByTestId('breaker-state')).toHaveAttribute('data-state', 'closed');
      await app.screenshot('runs-e2b');
    } finally {
      await sbx.kill();
    }
    await expect(runs.row(agent.name)).toHaveAttribute('data-status', 'finished');
  });
});
