// Egress control as a person watches it: an agent's `egress` sandbox fetches from an HTTP server this
// spec starts on the host's loopback (reached by names the suite's policy pins to it), the Runs view
// shows each connection under the exec that made it, and a destination that `ask`s pops up with its
// host and port for a person to approve; the sandbox's own page lists its connections.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, expect } from '../fixtures/test.js';
import { HttpAgent } from '../fixtures/agent.js';
import { TEST_LABEL_KEY } from '../fixtures/podman.js';
import { EGRESS_ALLOWED_HOST, EGRESS_ASKED_HOST, EGRESS_DENIED_HOST } from '../fixtures/policy.js';
import { RunsPage } from '../pages/runs-page.js';

/** A closed connection's row: its decision, destination, and bytes each way (both more than nothing: a plain request's heads count). */
const closedWithBytes = (decision: string, host: string, port: number) =>
  new RegExp(`^${decision} ${host.replace(/\./g, '\\.')}:${port} [1-9]\\d* B out · [1-9]\\d* B in$`);

let server: Server;
let port = 0;

test.beforeAll(async () => {
  server = createServer((req, res) => {
    const text = `hello ${req.url}\n`;
    // With its length: the proxy counts a body's bytes as they cross, chunk framing included.
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

test.afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

test.describe('egress', () => {
  test('connections show under the exec that made them; an asked destination waits for a person', async ({ app, serve, runId }) => {
    const runs = new RunsPage(app.page);
    const agent = HttpAgent.create(serve, `${runId}-fetcher`);
    const box = await agent.createSandbox({ name: `${runId}-egress-box`, network: 'egress', labels: { [TEST_LABEL_KEY]: runId } });
    await runs.open();
    await expect(runs.row(agent.name)).toBeVisible();
    await runs.select(agent.name);
    const createSeqs = runs.call(1).getByTestId('call-ledger');
    await expect(createSeqs).toHaveAttribute('data-seqs', /^\d+,\d+$/);
    const createdWith = await createSeqs.getAttribute('data-seqs');

    // 2: one exec, two connections: the allowed name answers, the denied one gets the proxy's 403.
    const allowedUrl = `http://${EGRESS_ALLOWED_HOST}:${port}/hello`;
    const deniedUrl = `http://${EGRESS_DENIED_HOST}:${port}/secret`;
    const fetched = await agent.exec(box.id, ['sh', '-c', `curl -sS ${allowedUrl}; curl -sS ${deniedUrl}`]);
    expect(fetched.exit?.code).toBe(0);
    expect(fetched.stdout).toBe(
      `hello /hello\nwarden egress: GET http://${EGRESS_DENIED_HOST}:${port} denied: egress.rules[2] (host ${EGRESS_DENIED_HOST}, deny)\n`,
    );
    const call = runs.call(2);
    await expect(call).toHaveAttribute('data-status', 'ok');
    const connections = call.getByTestId('call-connection');
    await expect(connections).toHaveCount(2);
    const allowed = connections.filter({ hasText: `${EGRESS_ALLOWED_HOST}:${port}` });
    await expect(allowed).toHaveAttribute('data-decision', 'allow');
    // Closed (no "open"), with its bytes: for plain HTTP the proxy counts heads as it counts bodies,
    // so a GET sends its head (about a hundred bytes) and gets its answer's head and "hello /hello\n".
    await expect(allowed).toHaveText(closedWithBytes('allowed', EGRESS_ALLOWED_HOST, port));
    const denied = connections.filter({ hasText: `${EGRESS_DENIED_HOST}:${port}` });
    await expect(denied).toHaveAttribute('data-decision', 'deny');
    await expect(denied).toHaveText(`denied ${EGRESS_DENIED_HOST}:${port} egress.rules[2] (host ${EGRESS_DENIED_HOST}, deny)`);
    await app.screenshot('egress-connections');

    // 3: a destination that asks: the prompt names host and port (and the command that made it);
    // approved, the connection goes on and the curl gets its answer.
    const askedUrl = `http://${EGRESS_ASKED_HOST}:${port}/approved`;
    const asking = agent.exec(box.id, ['curl', '-sS', askedUrl]);
    const prompt = runs.approval(`${EGRESS_ASKED_HOST}:${port}`);
    await expect(prompt).toBeVisible();
    await expect(prompt).toContainText(agent.name);
    await expect(prompt).toContainText(box.name);
    await expect(prompt.getByTestId('approval-summary')).toHaveText(
      `HTTP request to ${EGRESS_ASKED_HOST}:${port} (127.0.0.1) from sandbox ${box.id.slice(0, 12)} while \`curl -sS ${askedUrl}\` ran`,
    );
    await expect(prompt.getByTestId('approval-reason')).toHaveText(`egress.rules[1] (host ${EGRESS_ASKED_HOST}, cidr 127.0.0.1/32, ask)`);
    await expect(runs.call(3)).toHaveAttribute('data-status', 'running');
    await app.screenshot('egress-approval');
    await runs.answer(prompt, 'approve-once');
    const answered = await asking;
    expect(answered.stdout).toBe('hello /approved\n');
    expect(answered.exit?.code).toBe(0);
    const approvedConnection = runs.call(3).getByTestId('call-connection');
    await expect(approvedConnection).toHaveAttribute('data-decision', 'allow');
    await expect(approvedConnection).toContainText(`allowed ${EGRESS_ASKED_HOST}:${port}`);
    await expect(runs.call(3)).toHaveAttribute('data-status', 'ok');
    await app.screenshot('egress-approved');
    // The socket was first served inside the create call, but the connections' entries are the engine's
    // own: none of them is added to that call.
    await expect(createSeqs).toHaveAttribute('data-seqs', createdWith!);

    // The sandbox's own page lists its connections, newest first.
    await app.page.getByTestId('nav-sandboxes').click();
    await app.sandboxes.open(box.name);
    const network = app.page.getByTestId('sandbox-connection');
    await expect(network).toHaveCount(3);
    await expect(network.nth(0)).toHaveText(closedWithBytes('allowed', EGRESS_ASKED_HOST, port));
    await expect(network.nth(1)).toHaveText(`denied ${EGRESS_DENIED_HOST}:${port} egress.rules[2] (host ${EGRESS_DENIED_HOST}, deny)`);
    await expect(network.nth(2)).toHaveText(closedWithBytes('allowed', EGRESS_ALLOWED_HOST, port));
    await app.page.getByTestId('sandbox-network').scrollIntoViewIfNeeded();
    await app.screenshot('egress-sandbox-network');

    await agent.destroySandbox(box.id);
  });
});
