// The pool's config file and its one-process-per-home lock.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPoolConfig } from './pool-config.js';
import { takePoolLock } from './pool-lock.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
const home = () => {
  const h = mkdtempSync(join(tmpdir(), 'warden-poolcfg-'));
  homes.push(h);
  return h;
};

describe('pool config', () => {
  it('defaults to two of the default sandbox without a file, and reads pool.yaml with sizes as text', () => {
    const h = home();
    expect(loadPoolConfig(h)).toMatchObject({ source: 'defaults', config: { size: 2, shapes: [{}] } });
    writeFileSync(join(h, 'pool.yaml'), 'size: 1\nmaxMemory: 1g\nshapes:\n  - { memory: 256m, network: nat }\n');
    expect(loadPoolConfig(h).config).toMatchObject({
      size: 1,
      maxMemory: 1024 ** 3,
      shapes: [{ memory: 256 * 1024 ** 2, network: 'nat' }],
    });
  });

  it('refuses a file with a wrong field, naming it, rather than half-using it', () => {
    const h = home();
    writeFileSync(join(h, 'pool.yaml'), 'size: 1\nshapes:\n  - { workspace: /srv }\n');
    expect(() => loadPoolConfig(h)).toThrow(/workspace|Unrecognized/i);
    writeFileSync(join(h, 'pool.yaml'), 'labels: { warden.pool: x }\n');
    expect(() => loadPoolConfig(h)).toThrow(/reserved/);
  });
});

describe('pool lock', () => {
  it('is held by one live process of the home, and taken over from a dead one', () => {
    const h = home();
    const release = takePoolLock(h)!;
    expect(release).toBeTypeOf('function');
    release();
    // A live other process holds it.
    mkdirSync(join(h, 'pool'), { recursive: true });
    writeFileSync(join(h, 'pool', 'lock'), String(process.ppid));
    expect(takePoolLock(h)).toBeNull();
    // A dead one (kill -9) left it.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    writeFileSync(join(h, 'pool', 'lock'), dead);
    const taken = takePoolLock(h);
    expect(taken).toBeTypeOf('function');
    taken!();
  });
});
