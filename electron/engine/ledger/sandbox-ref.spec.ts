// `warden audit export --sandbox NAME` and `audit log --sandbox NAME`: a name (also of a sandbox that
// is gone) selects its entries as its id does; a name, id or prefix that matches nothing, or a range
// that holds none of its entries, is E_NOT_FOUND with a hint and writes no bundle; a reused name asks
// which one. (Beside the ledger because it is the ledger's CLI contract, as cli-audit.spec.ts.)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportBundle } from '../../../shared/types/ledger.js';
import { registerAudit } from '../../cli/commands/audit.js';
import { tempLedger, type TempLedger } from '../../test-support/temp-ledger.js';
import { exportBundle } from './export.js';
import { resolveSandboxRef } from './sandbox-ref.js';
import { runCliInProcess, type CliAnswer } from '../../test-support/cli-in-process.js';

const WEB = `c0ffee${'1'.repeat(58)}`;
const GONE = `dead00${'2'.repeat(58)}`;
const OLD_TWIN = `abcdef${'3'.repeat(58)}`;
const NEW_TWIN = `abcdef${'4'.repeat(58)}`;

let t: TempLedger;
const savedHome = process.env.WARDEN_HOME;
beforeAll(() => {
  t = tempLedger();
  process.env.WARDEN_HOME = t.dir;
  const l = t.open();
  const created = (id: string, name: string) => ({ actor: 'user', sandboxId: id, kind: 'sandbox.created', payload: { name } });
  l.appendBatch([
    created(WEB, 'web'),
    { actor: 'alice', sandboxId: WEB, kind: 'exec.finished', payload: { exit: 0 } },
    created(GONE, 'scratch'),
    { actor: 'alice', sandboxId: GONE, kind: 'exec.finished', payload: { exit: 1 } },
    { actor: 'user', sandboxId: GONE, kind: 'sandbox.destroyed', payload: {} },
    { actor: 'user', sandboxId: null, kind: 'policy.loaded', payload: {} },
    created(OLD_TWIN, 'twin'),
    created(NEW_TWIN, 'twin'),
  ]);
  l.close();
});
afterAll(() => {
  if (savedHome === undefined) delete process.env.WARDEN_HOME;
  else process.env.WARDEN_HOME = savedHome;
  t.cleanup();
});

function warden(...args: string[]): Promise<CliAnswer> {
  return runCliInProcess([registerAudit], args);
}

describe('a sandbox by name in ledger exports and filters', () => {
  it('resolves an id, a name (of a sandbox that is gone too) and an id prefix; refuses a reused name and an unknown one', () => {
    const l = t.open();
    try {
      expect(resolveSandboxRef(l, WEB)).toBe(WEB);
      expect(resolveSandboxRef(l, 'web')).toBe(WEB);
      expect(resolveSandboxRef(l, 'scratch')).toBe(GONE);
      expect(resolveSandboxRef(l, 'dead00')).toBe(GONE);
      expect(() => resolveSandboxRef(l, 'twin')).toThrow(
        expect.objectContaining({ code: 'E_CONFLICT', hint: 'pass the id of the one you mean' }),
      );
      expect(() => resolveSandboxRef(l, 'abcdef')).toThrow(expect.objectContaining({ code: 'E_CONFLICT' }));
      expect(resolveSandboxRef(l, NEW_TWIN.slice(0, 12))).toBe(NEW_TWIN);
      expect(() => resolveSandboxRef(l, 'nope')).toThrow(
        expect.objectContaining({ code: 'E_NOT_FOUND', message: expect.stringContaining('"nope"') }),
      );
      expect(exportBundle(l, { sandboxId: 'scratch' }).entries.map((e) => e.kind)).toEqual([
        'sandbox.created',
        'exec.finished',
        'sandbox.destroyed',
      ]);
      expect(() => exportBundle(l, { sandboxId: 'web', fromSeq: 3 })).toThrow(
        expect.objectContaining({ code: 'E_NOT_FOUND', message: expect.stringContaining('holds no ledger entries') }),
      );
    } finally {
      l.close();
    }
  });

  it('audit export --sandbox NAME writes that sandbox’s entries, with its id in the selection', async () => {
    const out = join(t.dir, 'web.json');
    const r = await warden('audit', 'export', '--out', out, '--sandbox', 'web', '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ entries: 2, selection: { sandboxId: WEB } });
    const bundle = JSON.parse(readFileSync(out, 'utf8')) as ReportBundle;
    expect(bundle.entries.map((e) => [e.sandboxId, e.kind])).toEqual([
      [WEB, 'sandbox.created'],
      [WEB, 'exec.finished'],
    ]);
  });

  it('audit export of a name or id that matches nothing fails with E_NOT_FOUND and a hint, and writes no bundle', async () => {
    for (const ref of ['nope', 'f'.repeat(64)]) {
      const out = join(t.dir, `${ref.slice(0, 8)}.json`);
      const r = await warden('audit', 'export', '--out', out, '--sandbox', ref);
      expect(r.code).toBe(4);
      expect(r.err).toContain(`no sandbox "${ref}" in the ledger`);
      expect(r.err).toContain('warden audit log --kind sandbox.created');
      expect(existsSync(out)).toBe(false);
      const json = await warden('audit', 'export', '--out', out, '--sandbox', ref, '--json');
      expect(json.code).toBe(4);
      expect(JSON.parse(json.out)).toMatchObject({ error: { code: 'E_NOT_FOUND' } });
    }
    const empty = await warden('audit', 'export', '--out', join(t.dir, 'empty.json'), '--sandbox', 'web', '--from', '3');
    expect(empty.code).toBe(4);
    expect(empty.err).toMatch(/the selection \(sandbox web \(c0ffee111111\), entries 3–end\) holds no ledger entries/);
  });

  it('audit log --sandbox takes a name too, and an unknown one is an error, not an empty list', async () => {
    const log = await warden('audit', 'log', '--sandbox', 'scratch', '--json');
    expect(log.code, log.err).toBe(0);
    expect((JSON.parse(log.out) as Array<{ sandboxId: string }>).map((e) => e.sandboxId)).toEqual([GONE, GONE, GONE]);
    const missing = await warden('audit', 'log', '--sandbox', 'nope');
    expect(missing.code).toBe(4);
    expect(missing.err).toContain('no sandbox "nope"');
  });

  it('a name that is another sandbox’s short id does not stand in for it: both are named', () => {
    const l = t.open();
    try {
      const decoy = `beef00${'5'.repeat(58)}`;
      l.appendBatch([{ actor: 'bot', sandboxId: decoy, kind: 'sandbox.created', payload: { name: WEB.slice(0, 12) } }]);
      expect(() => resolveSandboxRef(l, WEB.slice(0, 12))).toThrow(
        expect.objectContaining({ code: 'E_CONFLICT', message: expect.stringContaining('beef00555555') }),
      );
      expect(resolveSandboxRef(l, WEB)).toBe(WEB);
    } finally {
      l.close();
    }
  });
});
