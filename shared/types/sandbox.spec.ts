import { describe, expect, it } from 'vitest';
import { SandboxSpecSchema } from './sandbox.js';
import { parseByteSize, formatByteSize } from './units.js';
import { parseRequest } from '../contracts/validate.js';

describe('byte sizes', () => {
  it('reads the sizes podman accepts', () => {
    expect(parseByteSize('512m')).toBe(512 * 1024 ** 2);
    expect(parseByteSize('1.5g')).toBe(1.5 * 1024 ** 3);
    expect(parseByteSize('2048K')).toBe(2048 * 1024);
    expect(parseByteSize('1073741824')).toBe(1073741824);
    expect(parseByteSize('12q')).toBeNull();
    expect(parseByteSize('-5m')).toBeNull();
    expect(parseByteSize('')).toBeNull();
    expect(formatByteSize(512 * 1024 ** 2)).toBe('512 MiB');
  });
});

describe('sandbox spec', () => {
  it('parses sizes to bytes and keeps the rest', () => {
    const spec = SandboxSpecSchema.parse({ name: 'web-1', memory: '256m', cpus: 0.5, pids: 100, network: 'nat', env: { A: '1' } });
    expect(spec).toMatchObject({ name: 'web-1', memory: 256 * 1024 ** 2, cpus: 0.5, pids: 100, network: 'nat' });
    expect(SandboxSpecSchema.parse({ disk: '4g' }).disk).toBe(4 * 1024 ** 3);
  });

  it('refuses what a container engine would refuse, saying which field and why', () => {
    expect(() => parseRequest('sandbox.create', { memory: '12q' })).toThrow(/memory: memory "12q" is not a size/);
    expect(() => parseRequest('sandbox.create', { memory: '1k' })).toThrow(/out of range/);
    expect(() => parseRequest('sandbox.create', { disk: '4x' })).toThrow(/disk: disk "4x" is not a size/);
    expect(() => parseRequest('sandbox.create', { disk: '1m' })).toThrow(/disk 1m is out of range/);
    expect(() => parseRequest('sandbox.create', { name: '../etc' })).toThrow(/name must start with a letter or digit/);
    expect(() => parseRequest('sandbox.create', { network: 'host' })).toThrow(/network/);
    expect(() => parseRequest('sandbox.create', { workspace: 'relative/dir' })).toThrow(/absolute/);
    expect(() => parseRequest('sandbox.create', { runtime: 'kata' })).toThrow(/runtime/);
    expect(SandboxSpecSchema.parse({ runtime: 'runsc' }).runtime).toBe('runsc');
    expect(() => parseRequest('sandbox.create', { privileged: true })).toThrow(/privileged/);
    expect(() => parseRequest('sandbox.create', { env: { 'BAD-NAME': 'x' } })).toThrow(/env/);
    try {
      parseRequest('sandbox.create', { cpus: -1 });
    } catch (err) {
      expect(err).toMatchObject({ code: 'E_BAD_INPUT' });
    }
  });
});
