// The file helper refuses a write by its own checks even when the command is large: it takes all
// of its stdin first, so a refusal is never cut short by Podman resetting the stream under a
// write it had stopped reading (which once turned a symlink refusal into E_ENGINE under load).
import { describe, expect, it } from 'vitest';
import { useTestEngine } from '../../test-support/podman-fixture.js';
import { writeFileIn } from './file-helper.js';

const t = useTestEngine();

describe('file helper writes', () => {
  it('refuses a write through a symlinked directory with its own answer, however large the data', async () => {
    const sb = await t.create();
    expect((await t.sh(sb.id, 'mkdir -p /tmp/outside && ln -s /tmp/outside /workspace/link')).exitCode).toBe(0);
    const data = Buffer.alloc(6 * 1024 * 1024, 0x61);
    for (let i = 0; i < 5; i++) {
      await expect(writeFileIn(t.engine.connection, sb.id, ['link', 'new'], data)).rejects.toMatchObject({
        code: 'E_POLICY_DENIED',
        message: expect.stringContaining('symlink'),
      });
    }
    expect((await t.sh(sb.id, 'ls /tmp/outside')).out).toBe('');
    await expect(writeFileIn(t.engine.connection, sb.id, ['ok.txt'], data)).resolves.toMatchObject({ bytes: data.length });
  });
});
