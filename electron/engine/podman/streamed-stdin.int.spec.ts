// A command's stdin streamed while it runs, on both ways a command runs (the runner, and the plain
// engine exec a sandbox falls back to): bytes arrive in order and EOF ends them; a command that
// never reads holds its writer back (the write stays pending while other commands are served) and
// its end fails the write; a pseudo-terminal is the runner's only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxInfo } from '../../../shared/types/sandbox.js';
import { closeTestWarden, openTestWarden, type TestWarden } from '../../test-support/podman-fixture.js';
import type { CommandInput } from './exec-handlers.js';
import { collectExec, runExec, runPlainExec } from './exec-session.js';

let w: TestWarden;
let sb: SandboxInfo;
beforeAll(async () => {
  w = await openTestWarden();
  sb = await w.t.create();
});
afterAll(async () => {
  await closeTestWarden(w);
});

const conn = () => w.t.engine.connection;

/** The command's input, once the exec hands it over. */
function inputOf(): { openInput: (i: CommandInput) => void; opened: Promise<CommandInput> } {
  let openInput!: (i: CommandInput) => void;
  const opened = new Promise<CommandInput>((resolve) => (openInput = resolve));
  return { openInput, opened };
}

for (const [way, exec] of [
  ['the runner', runExec],
  ['a plain engine exec', runPlainExec],
] as const) {
  describe(`streamed stdin through ${way}`, () => {
    it('arrives in order, and EOF ends it', async () => {
      const out: Buffer[] = [];
      const { openInput, opened } = inputOf();
      const ran = exec(
        conn(),
        sb.id,
        { cmd: ['sh', '-c', 'printf "%.7s|" "$WARDEN_EXEC_ID"; cat; echo "<eof>"'] },
        { onStdout: (c) => void out.push(c), openInput },
      );
      const input = await opened;
      await input.write(Buffer.from('one\n'));
      await input.write(Buffer.alloc(600 * 1024, 97));
      await input.write(Buffer.from('\ntwo\n'));
      input.end();
      const result = await ran;
      expect(result.exitCode).toBe(0);
      const text = Buffer.concat(out).toString();
      // Which way it ran: the runner's commands carry its marker.
      expect(text.startsWith('runner-|')).toBe(way === 'the runner');
      expect(text.slice(text.indexOf('|') + 1)).toBe(`one\n${'a'.repeat(600 * 1024)}\ntwo\n<eof>\n`);
    });

    it('holds back a writer whose command never reads, and fails it when the command ends', async () => {
      const stop = new AbortController();
      const { openInput, opened } = inputOf();
      const ran = exec(conn(), sb.id, { cmd: ['sleep', '300'] }, { openInput, signal: stop.signal });
      const input = await opened;
      let settled = false;
      // Far more than any pipe and socket buffers on the way hold.
      const write = input.write(Buffer.alloc(64 << 20, 1)).finally(() => (settled = true));
      write.catch(() => undefined);
      expect((await collectExec(conn(), sb.id, { cmd: ['echo', 'served'] })).stdout.toString()).toBe('served\n');
      expect(settled).toBe(false);
      stop.abort('clientGone');
      await ran;
      await expect(write).rejects.toThrow(/ended|closed its stdin/);
    });
  });
}

it('refuses a pseudo-terminal on a plain engine exec, which has none to give', async () => {
  await expect(runPlainExec(conn(), sb.id, { cmd: ['sh'] }, { openInput: () => undefined, pty: { cols: 80, rows: 24 } })).rejects.toThrow(
    /runner/,
  );
});
