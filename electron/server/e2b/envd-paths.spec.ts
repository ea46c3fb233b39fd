// The home-to-workspace mapping: only /home/user itself and what is under it move.
import { describe, expect, it } from 'vitest';
import { wardenPath } from './envd-paths.js';

describe('wardenPath', () => {
  it('maps the E2B home onto /workspace and leaves every other path to the gateway', () => {
    expect(wardenPath('/home/user')).toBe('/workspace');
    expect(wardenPath('/home/user/')).toBe('/workspace');
    expect(wardenPath('/home/user/a/b.txt')).toBe('/workspace/a/b.txt');
    expect(wardenPath('/home/username/x')).toBe('/home/username/x');
    expect(wardenPath('notes.txt')).toBe('notes.txt');
    expect(wardenPath('/home/user/../../etc/passwd')).toBe('/workspace/../../etc/passwd');
  });
});
