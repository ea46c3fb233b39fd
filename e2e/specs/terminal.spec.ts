import { test, expect } from '../fixtures/test.js';

test.describe('sandbox detail', () => {
  test('the terminal echoes what is typed, takes a multi-line paste, and the CPU graph rises under load', async ({ app }) => {
    const name = app.sandboxes.name('term');
    await app.sandboxes.create({ name, cpus: '1' });
    await app.sandboxes.open(name);
    const detail = app.detail;
    await detail.waitTerminal();

    await detail.type('echo hi\n');
    await expect.poll(() => detail.screenText()).toMatch(/^hi$/m);

    // Bash takes a paste as bracketed text: both lines land at the prompt and run on Enter.
    await detail.paste('echo one\necho two');
    await detail.press('Enter');
    await expect.poll(() => detail.screenText()).toMatch(/^one$[\s\S]*^two$/m);

    // The graph rises under load and falls after it, judged against the sandbox's own idle figure,
    // not a fixed one: on a busy host `yes` may get far less than its core. Waits are hang guards.
    await expect.poll(() => detail.cpuPercent(), { timeout: 60_000 }).not.toBeNaN(); // the first sample is in
    const idle = await detail.cpuPercent();
    await detail.type('yes > /dev/null &\n');
    await expect.poll(() => detail.cpuPercent(), { timeout: 60_000 }).toBeGreaterThan(Math.max(10, idle * 3));
    const busy = await detail.cpuPercent();
    await app.screenshot('sandbox-detail');
    await detail.type('kill %1\n');
    await expect.poll(() => detail.cpuPercent(), { timeout: 60_000 }).toBeLessThan(busy / 2);
  });

  test('a burst of output does not freeze the page', async ({ app }) => {
    const name = app.sandboxes.name('burst');
    await app.sandboxes.create({ name });
    await app.sandboxes.open(name);
    await app.detail.waitTerminal();
    await app.detail.type('head -c 3000000 /dev/urandom | base64; echo done-$((6*7))\n');
    await expect.poll(() => app.detail.screenText(), { timeout: 60_000 }).toMatch(/^done-42$/m);
    // The page still answers: script runs and a frame is painted.
    const painted = await app.page.evaluate(
      () =>
        new Promise<number>((resolve) =>
          (globalThis as unknown as { requestAnimationFrame(cb: () => void): void }).requestAnimationFrame(() => resolve(1)),
        ),
    );
    expect(painted).toBe(1);
  });
});
