// The CLI as a user runs it: a real process, real Podman, its exit codes and --json contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { openAuditLedger } from '../engine/open-warden.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'warden.mjs');
let home: string;
const prefix = `cli-${randomBytes(3).toString('hex')}`;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function warden(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const r = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, WARDEN_HOME: home, ...env },
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function wardenBytes(args: string[]): Promise<{ status: number | null; stdout: Buffer; stderr: Buffer }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, WARDEN_HOME: home } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('close', (status) => resolve({ status, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }));
  });
}

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'warden-cli-'));
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-cli.mjs')], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
});

afterAll(() => {
  const list = warden(['sandbox', 'ls', '--json']);
  if (list.status === 0) {
    for (const s of JSON.parse(list.stdout) as Array<{ name: string }>) if (s.name.startsWith(prefix)) warden(['sandbox', 'rm', s.name]);
  }
  rmSync(home, { recursive: true, force: true });
});

describe('warden CLI', () => {
  it('doctor is green and says which runtime it picked', () => {
    const r = warden(['doctor', '--json']);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.ok).toBe(true);
    expect(report.connection.defaultRuntime).toMatch(/^(runc|crun)$/);
    expect(report.image.present).toBe(true);
    const human = warden(['doctor']);
    expect(human.stdout).toMatch(/default runtime\s+(runc|crun)/);
    expect(report.checks.find((c: { name: string }) => c.name === 'disk limit')?.detail).toMatch(/^enforced/);
  });

  it('attest: a checklist with evidence, --json, exit 0 only when every promise holds', () => {
    const name = `${prefix}-att`;
    expect(warden(['sandbox', 'create', '--name', name, '--read-only']).status).toBe(0);
    try {
      const human = warden(['sandbox', 'attest', name]);
      expect(human.status, human.stdout + human.stderr).toBe(0);
      expect(human.stdout).toMatch(/✓ read-only root filesystem\s+a write to \/ failed: Read-only file system/);
      expect(human.stdout).toMatch(/✓ every promise holds/);
      const json = warden(['sandbox', 'attest', name, '--json']);
      expect(JSON.parse(json.stdout)).toMatchObject({ name, ok: true, deep: false, actor: 'user' });
      const missing = warden(['sandbox', 'attest', `${prefix}-none`]);
      expect(missing.status).toBe(4);
      expect(missing.stderr).toContain(`no sandbox named ${prefix}-none`);
    } finally {
      warden(['sandbox', 'rm', name]);
    }
  });

  it('round trip: create → exec → ls → rm, with the command’s exit code and streams', async () => {
    const name = `${prefix}-a`;
    const created = warden([
      'sandbox',
      'create',
      '--name',
      name,
      '--memory',
      '256m',
      '--cpus',
      '0.5',
      '--pids',
      '128',
      '--disk',
      '256m',
      '--json',
    ]);
    expect(created.status, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      name,
      state: 'running',
      limits: { memoryBytes: 256 * 1024 ** 2, cpus: 0.5, pids: 128, diskBytes: 256 * 1024 ** 2, diskEnforced: true },
      network: 'none',
    });

    const exec = await wardenBytes(['exec', name, '--', 'sh', '-c', 'printf "out\\n"; printf "err\\n" >&2; exit 7']);
    expect(exec.status).toBe(7);
    expect(exec.stdout.toString()).toBe('out\n');
    expect(exec.stderr.toString()).toBe('err\n');

    const big = await wardenBytes(['exec', name, '--', 'head', '-c', '3000000', '/dev/urandom']);
    expect(big.status).toBe(0);
    expect(big.stdout.length).toBe(3_000_000);

    const ls = warden(['sandbox', 'ls', '--json']);
    expect(JSON.parse(ls.stdout).map((s: { name: string }) => s.name)).toContain(name);
    expect(warden(['sandbox', 'ls']).stdout).toMatch(new RegExp(`${name}\\s+running`));

    expect(warden(['sandbox', 'stop', name]).status).toBe(0);
    expect(JSON.parse(warden(['sandbox', 'inspect', name, '--json']).stdout).state).toBe('exited');
    expect(warden(['sandbox', 'start', name]).status).toBe(0);

    const rm = warden(['sandbox', 'rm', name, '--json']);
    expect(rm.status).toBe(0);
    expect(JSON.parse(rm.stdout).removed.name).toBe(name);
    expect(JSON.parse(warden(['sandbox', 'ls', '--json']).stdout).map((s: { name: string }) => s.name)).not.toContain(name);
    // Its disk (mount and file) went with it.
    expect(readdirSync(join(home, 'disks'))).toEqual([]);

    // Every step is in the one ledger, in order, and the chain verifies.
    const ledger = openAuditLedger(home);
    try {
      const id = JSON.parse(created.stdout).id as string;
      const kinds = ledger.entries({ sandboxId: id }).map((e) => e.kind);
      // Each start is attested before the CLI exits (the attestation runs in the background of create).
      expect(kinds).toEqual([
        'sandbox.created',
        'sandbox.attested',
        'exec.started',
        'exec.finished',
        'exec.started',
        'exec.finished',
        'sandbox.stopped',
        'sandbox.started',
        'sandbox.attested',
        'sandbox.destroyed',
      ]);
      const finished = ledger.entries({ sandboxId: id, kind: 'exec.finished' })[0]!.payload as Record<string, unknown>;
      expect(finished).toMatchObject({
        argv: ['sh', '-c', expect.any(String)],
        exitCode: 7,
        stdoutBytes: 4,
        stderrBytes: 4,
        stdoutPreview: 'out\n',
        stderrPreview: 'err\n',
      });
      expect(finished.stdoutDigest).toMatch(/^[0-9a-f]{64}$/);
      expect(ledger.verify().ok).toBe(true);
    } finally {
      ledger.close();
    }
  });

  it("sandbox ttl: a new deadline from now, or none, over the create's, recorded; bad input is one clear line", () => {
    const name = `${prefix}-ttl`;
    const created = JSON.parse(warden(['sandbox', 'create', '--name', name, '--ttl', '60', '--json']).stdout) as {
      id: string;
      expiresAt: string;
    };
    const later = warden(['sandbox', 'ttl', name, '3600', '--json']);
    expect(later.status, later.stderr).toBe(0);
    const at = Date.parse((JSON.parse(later.stdout) as { expiresAt: string }).expiresAt);
    expect(at).toBeGreaterThan(Date.parse(created.expiresAt));
    // Another process reads the same record (the label still says 60 s).
    expect(Date.parse(JSON.parse(warden(['sandbox', 'inspect', name, '--json']).stdout).expiresAt)).toBe(at);
    expect(JSON.parse(warden(['sandbox', 'ttl', name, 'none', '--json']).stdout).expiresAt).toBeNull();
    const bad = warden(['sandbox', 'ttl', name, 'soon']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('ttlSeconds');
    const ledger = openAuditLedger(home);
    try {
      const set = ledger
        .entries({ sandboxId: created.id, kind: 'sandbox.ttl-set' })
        .map((e) => e.payload as { from: string; to: string | null });
      expect(set.map((p) => p.to)).toEqual([expect.any(String), null]);
      expect(set[0]!.from).toBe(created.expiresAt);
    } finally {
      ledger.close();
    }
    expect(warden(['sandbox', 'rm', name]).status).toBe(0);
  });

  it('network egress: a one-shot exec gets the sandbox a way out, and the policy (nothing, as shipped) refuses it with the rule', () => {
    const name = `${prefix}-egress`;
    const created = warden(['sandbox', 'create', '--name', name, '--network', 'egress', '--json']);
    expect(created.status, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).network).toBe('egress');
    // Each command is its own process: the create served the sandbox's socket until it exited (the relay
    // inside runs on), and the exec serves it again for its command.
    const r = warden(['exec', name, '--', 'curl', '-sS', '-w', '%{http_code}', 'http://example.com/']);
    expect([r.status, r.stdout]).toEqual([0, 'warden egress: GET http://example.com:80 denied: no rule allows it; default deny\n403']);
    expect(warden(['sandbox', 'rm', name]).status).toBe(0);
  });

  it('exits 124 on timeout and kills what the command started', () => {
    const name = `${prefix}-t`;
    expect(warden(['sandbox', 'create', '--name', name]).status).toBe(0);
    const r = warden(['exec', '--timeout', '1', name, '--', 'sh', '-c', 'sleep 1000 & sleep 1000']);
    expect(r.status).toBe(124);
    expect(r.stderr).toMatch(/timed out after 1s/);
    expect(warden(['exec', name, '--', 'ps', '-eo', 'args']).stdout).not.toMatch(/sleep 1000/);
  });

  it('answers bad input with one clear line and a non-zero exit, never a stack trace', () => {
    const cases: Array<[string[], RegExp]> = [
      [['sandbox', 'rm', 'no-such-sandbox'], /no sandbox named no-such-sandbox/],
      [['exec', 'no-such-sandbox', '--', 'true'], /no sandbox named no-such-sandbox/],
      [['sandbox', 'create', '--memory', '12q'], /memory "12q" is not a size/],
      [['sandbox', 'create', '--cpus', 'lots'], /--cpus "lots" is not a number/],
      [['sandbox', 'create', '--network', 'host'], /network/],
      [['sandbox', 'create', '--image', 'localhost/nope:0'], /image localhost\/nope:0 is not present/],
      [['sandbox', 'create', '--runtime', 'krun'], /krun/],
      [['exec', '--timeout', '-3', 'x', '--', 'true'], /--timeout must be more than 0/],
      [['sandbox', 'frobnicate'], /unknown command/],
    ];
    for (const [args, message] of cases) {
      const r = warden(args);
      expect(r.status, args.join(' ')).not.toBe(0);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
    }
    // Words the CLI cannot parse are bad input too: exit 2, as the README promises.
    for (const args of [['sandbox', 'frobnicate'], ['sandbox', 'create', '--memory'], ['--no-such-flag']]) {
      expect(warden(args).status, args.join(' ')).toBe(2);
    }
    expect(warden(['--help']).status).toBe(0);
    const json = warden(['sandbox', 'rm', 'no-such-sandbox', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      error: { code: 'E_NOT_FOUND', message: 'no sandbox named no-such-sandbox', hint: expect.any(String) },
    });
  });

  it('says the engine is unreachable, with what to do, when no socket answers', () => {
    const ls = warden(['sandbox', 'ls'], { WARDEN_PODMAN_SOCKET: '/nonexistent/podman.sock' });
    expect(ls.status).toBe(3);
    expect(ls.stderr).toMatch(/the Podman engine is not answering at \/nonexistent\/podman.sock/);
    expect(ls.stderr).toMatch(/hint: start it/);
    const explicit = warden(['doctor', '--json'], { WARDEN_PODMAN_SOCKET: '/nonexistent/podman.sock' });
    expect(explicit.status).toBe(1);
    const report = JSON.parse(explicit.stdout);
    expect(report.ok).toBe(false);
    expect(report.checks.find((c: { name: string }) => c.name === 'engine')).toMatchObject({
      ok: false,
      fix: expect.stringMatching(/podman system service/),
    });
  });
});
