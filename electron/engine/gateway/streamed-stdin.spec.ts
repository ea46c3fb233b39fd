// A command whose stdin its client streams while it runs (E2B's sendStdin, a PTY's keys) is judged
// without that input: a shell that would read its script from it runs a script only known at run
// time (the `dynamic` action, denied by the default policy), where the same command with no stdin
// reads nothing; a program that only reads data is judged as itself; the prompt says so.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commandSummary, execVerdict } from './approval-scope.js';
import { STREAMED_STDIN } from './command-expand.js';
import { defaultPolicyPath, parsePolicy } from './policy-load.js';

const policy = parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'default');

describe('a command with streamed stdin', () => {
  it('is dynamic when a shell reads its script from it, wherever that shell sits', () => {
    for (const argv of [
      ['/bin/bash', '-l', '-c', 'bash'],
      ['/bin/bash', '-l', '-c', 'sh -s'],
      ['/bin/bash', '-l', '-c', 'cat | sh'],
      ['/bin/bash', '-l', '-c', 'env FOO=1 bash /dev/stdin'],
      ['/bin/bash', '-i', '-l'],
    ]) {
      const v = execVerdict(policy.commands, argv, STREAMED_STDIN);
      expect(v.action, argv.join(' ')).toBe('deny');
      expect(v.reason, argv.join(' ')).toMatch(/run time|interactive/);
    }
  });

  it('differs from the same command with no stdin, which gives the shell nothing to run', () => {
    expect(execVerdict(policy.commands, ['/bin/bash', '-l', '-c', 'bash']).action).toBe('allow');
  });

  it('leaves a program that only reads data to its own rule', () => {
    expect(execVerdict(policy.commands, ['/bin/bash', '-l', '-c', 'cat'], STREAMED_STDIN).action).toBe('allow');
    expect(execVerdict(policy.commands, ['/bin/bash', '-l', '-c', 'while read l; do echo "$l"; done'], STREAMED_STDIN).action).toBe(
      'allow',
    );
  });

  it('says in the prompt that the input is streamed', () => {
    expect(commandSummary(['cat'], STREAMED_STDIN)).toBe('exec cat\n--- stdin: streamed by the client while it runs ---');
  });
});
