// A revocation reaches the listeners of the store that made it (the server's own, when a door of
// that process revokes), not only those of another process's store that reloads the file, even when
// both writes of the file fall within one tick of its clock.
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TokenStore } from './tokens.js';

const home = mkdtempSync(join(tmpdir(), 'warden-tokens-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('token revocation', () => {
  it('tells the revoking store, and a store of the same home that reloads, exactly which tokens went', () => {
    const mine = new TokenStore(home);
    const other = new TokenStore(home);
    const a = mine.create('agent-a').info.id;
    const b = mine.create('agent-a').info.id;
    const keep = mine.create('agent-b').info.id;
    const heardHere: string[] = [];
    const heardThere: string[] = [];
    mine.on('revoked', (ids) => heardHere.push(...ids));
    // Both writes within one tick of the file's clock (as under load): its times alone cannot tell them apart.
    const tokensFile = join(home, 'tokens.json');
    const tick = Math.floor(Date.now() / 1000);
    utimesSync(tokensFile, tick, tick);
    other.list(); // loads the three active tokens
    other.on('revoked', (ids) => heardThere.push(...ids));
    expect(mine.revoke('agent-a')).toBe(2);
    utimesSync(tokensFile, tick, tick);
    expect(heardHere.sort()).toEqual([a, b].sort());
    other.list(); // what its file watcher does on the change
    expect(heardThere.sort()).toEqual([a, b].sort());
    expect(mine.list().find((t) => t.id === keep)?.revokedAt).toBeNull();
  });
});
