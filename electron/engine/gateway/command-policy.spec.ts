import { describe, expect, it } from 'vitest';
import { decideCommand, expandCommand } from './command-policy.js';
import type { CommandPolicy } from './command-policy.js';
import { CommandRuleSchema } from '../../../shared/types/policy.js';
import { Breaker } from './breaker.js';
import { workspaceComponents } from '../podman/workspace-path.js';
import { pathAccess } from './path-policy.js';
import { readFileSync } from 'node:fs';
import { defaultPolicyPath, parsePolicy } from './policy-load.js';
import { globToRegExp } from './glob.js';

const policy: CommandPolicy = {
  default: 'allow',
  dynamic: 'deny',
  rules: [
    CommandRuleSchema.parse({ command: 'rm', action: 'deny' }),
    CommandRuleSchema.parse({ command: 'git', args: 'push', action: 'ask' }),
  ],
};
const action = (argv: string[], stdin?: string) => decideCommand(policy, argv, stdin).action;

describe('command policy', () => {
  it('matches the program by basename and through quoting', () => {
    expect(action(['rm', '-rf', 'x'])).toBe('deny');
    expect(action(['/usr/bin/rm', 'x'])).toBe('deny');
    expect(action(['/bin/sh', '-c', "'r''m' -rf /"])).toBe('deny');
    expect(action(['sh', '-c', '\\rm x'])).toBe('deny');
    expect(action(['sh', '-c', '"/bin/rm" x'])).toBe('deny');
    expect(action(['bash', '-c', "$'\\x72m' x"])).toBe('deny');
    expect(action(['ls', '-la'])).toBe('allow');
  });

  it('looks through shells, lists, substitutions and wrappers', () => {
    for (const script of [
      'echo a; rm x',
      'true && rm x',
      'false || rm x',
      'echo $(rm x)',
      'echo `rm x`',
      'cat <(rm x)',
      'if true; then rm x; fi',
      'A=1 rm x',
      'ls | xargs rm',
      '(cd /; rm x)',
      'echo ${X:-$(rm x)}',
      'echo a\nrm x',
    ]) {
      expect(action(['sh', '-c', script]), script).toBe('deny');
    }
    for (const argv of [
      ['env', 'rm', 'x'],
      ['env', '-i', 'A=1', 'rm'],
      ['nice', '-n', '5', 'rm'],
      ['timeout', '5', 'rm'],
      ['sudo', '-u', 'root', 'rm'],
      ['xargs', '-n1', 'rm'],
      ['busybox', 'rm', 'x'],
      ['find', '.', '-exec', 'rm', '{}', ';'],
      ['bash', '-lc', 'rm x'],
      ['sh', '-e', '-c', 'rm x'],
      ['eval', 'rm x'],
      ['env', '-S', 'rm x'],
      ['nohup', 'sh', '-c', 'env rm x'],
    ]) {
      expect(action(argv), argv.join(' ')).toBe('deny');
    }
  });

  it('reads a shell script given on stdin', () => {
    expect(action(['sh'], 'rm -rf /')).toBe('deny');
    expect(action(['bash', '-s'], 'echo hi; rm x')).toBe('deny');
    expect(action(['sh'], 'echo hi')).toBe('allow');
  });

  it('denies programs only known at run time, and asks by argument', () => {
    expect(action(['sh', '-c', '$CMD x'])).toBe('deny');
    expect(action(['sh', '-c', '"$(echo rm)" x'])).toBe('deny');
    expect(action(['sh', '-c', '/bin/r? x'])).toBe('deny');
    expect(action(['sh', '-c', 'echo $HOME; [ -f x ] && ls'])).toBe('allow');
    expect(action(['git', 'push', 'origin'])).toBe('ask');
    expect(action(['git', 'status'])).toBe('allow');
    expect(action(['sh', '-c', 'git status && git push'])).toBe('ask');
    expect(action(['sh', '-c', 'git push; rm x'])).toBe('deny');
  });

  it("reads programs and long options named after Object.prototype's keys like any others", () => {
    // They used to find the prototype's entries: toString passed for a wrapper and threw, --constructor for a known option.
    expect(decideCommand(policy, ['toString', 'x'])).toMatchObject({ action: 'allow', source: 'default', programs: ['toString'] });
    expect(decideCommand(policy, ['constructor', 'rm'])).toMatchObject({ action: 'allow', programs: ['constructor'] });
    expect(decideCommand(policy, ['nice', '--toString', 'ls']).reason).toMatch(/nice: unknown option --toString/);
    expect(decideCommand(policy, ['env', '--constructor', 'ls']).reason).toMatch(/env: unknown option --constructor/);
  });

  it('skips redirection targets and keeps every program', () => {
    expect(expandCommand(['sh', '-c', 'echo hi > rm 2>&1; cat < rm']).map((c) => c.program)).toEqual(['sh', 'echo', 'cat']);
  });
});

describe('the default policy', () => {
  const defaults = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'policy.default.yaml').commands;
  const verdict = (argv: string[], stdin?: string) => decideCommand(defaults, argv, stdin).action;

  it('refuses rm of the whole filesystem and nothing else rm does', () => {
    for (const argv of [
      ['rm', '-f', '/workspace/x'],
      ['rm', '-rf', '/tmp/build'],
      ['rm', '/x'],
      ['sh', '-c', 'rm -rf /workspace/*'],
      ['rm', '-rf', '*'],
    ]) {
      expect(verdict(argv), argv.join(' ')).toBe('allow');
    }
    for (const argv of [
      ['rm', '-rf', '/'],
      ['rm', '-rf', '/*'],
      ['sh', '-c', 'rm -rf /*'],
      ['rm', '--no-preserve-root', '-rf', '/'],
      ['sh', '-c', 'cd / && rm -rf -- /'],
    ]) {
      expect(verdict(argv), argv.join(' ')).toBe('deny');
    }
  });

  it('denies a program only known at run time, and allows what scripts commonly do', () => {
    expect(verdict(['sh', '-c', 'echo id | sh'])).toBe('deny');
    for (const script of [
      'echo hi | cat',
      'find . -name "$X" -type f -exec grep -l foo {} +',
      'for f in *.ts; do echo "$f"; done',
      'case "$1" in a|b) echo a;; *) echo b;; esac',
      '[[ -n $X && $Y == z ]] && echo y',
      'cat <<EOF > f\nhello $USER\nEOF',
      "python3 - <<'EOF'\nprint(1)\nEOF",
      'bash <<< "echo hi"',
      'f() { echo hi; }; f',
      'x=$(git rev-parse HEAD); echo $x',
      'set -euo pipefail; ls | wc -l',
      'nice -10 make && timeout 5 make test',
    ]) {
      expect(verdict(['bash', '-c', script]), script).toBe('allow');
    }
    expect(verdict(['sh'], 'echo hi')).toBe('allow');
  });

  it('reads a backslash in a glob as making the next character plain', () => {
    expect(globToRegExp('/\\*', false).test('/*')).toBe(true);
    expect(globToRegExp('/\\*', false).test('/workspace/x')).toBe(false);
    expect(globToRegExp('/*', false).test('/workspace/x')).toBe(true);
    expect(globToRegExp('a\\?b', false).test('a?b')).toBe(true);
    expect(globToRegExp('a\\?b', false).test('axb')).toBe(false);
  });
});

describe('workspace paths', () => {
  it('refuses escapes and keeps plain components', () => {
    expect(workspaceComponents('a/./b')).toEqual(['a', 'b']);
    expect(workspaceComponents('/workspace/a')).toEqual(['a']);
    expect(workspaceComponents('%2e%2e/x')).toEqual(['%2e%2e', 'x']);
    for (const bad of ['../etc/passwd', '/workspace/../etc', '/etc/passwd', '/workspace2/x', '/workspacex', 'a/../../b', 'a\0b']) {
      expect(() => workspaceComponents(bad), bad).toThrow();
    }
  });

  it('applies hidden and read-only rules to a path and everything under it', () => {
    const rules = [
      { path: '/workspace/.git', access: 'read-only' as const },
      { path: '/workspace/**/.env', access: 'hidden' as const },
    ];
    expect(pathAccess(rules, '/workspace/.git/config').access).toBe('read-only');
    expect(pathAccess(rules, '/workspace/a/b/.env').access).toBe('hidden');
    expect(pathAccess(rules, '/workspace/.env').access).toBe('hidden');
    expect(pathAccess(rules, '/workspace/src/a.ts').access).toBe('read-write');
  });
});

describe('breaker', () => {
  it('opens after K failures, lets one probe through after the cool-down, and closes only on success', () => {
    let now = 0;
    const b = new Breaker(3, 1000, () => now);
    for (let i = 0; i < 3; i++) {
      const a = b.admit();
      expect(a.ok).toBe(true);
      b.settle(false, false);
    }
    expect(b.info().state).toBe('open');
    expect(b.admit().ok).toBe(false);
    now = 1000;
    const probe = b.admit();
    expect(probe).toEqual({ ok: true, probe: true });
    expect(b.admit().ok).toBe(false); // only one probe at a time
    b.settle(false, true);
    expect(b.info().state).toBe('open');
    now = 2500;
    const again = b.admit();
    expect(again.ok).toBe(true);
    b.settle(true, true);
    expect(b.info()).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });
});
