// Ways past a deny rule, by class, each found by hand against the shell grammar the policy claims to
// look through. Every row must end in deny: either `id` is found by name, or the command is dynamic.
import { describe, expect, it } from 'vitest';
import { decideCommand, type CommandPolicy } from './command-policy.js';
import { CommandRuleSchema } from '../../../shared/types/policy.js';

const policy: CommandPolicy = { default: 'allow', dynamic: 'deny', rules: [CommandRuleSchema.parse({ command: 'id', action: 'deny' })] };
const sh = (script: string): [string[], string?] => [['bash', '-c', script]];

/** [class, argv, stdin?] */
const BYPASSES: [string, string[], string?][] = [
  // a shell fed by something other than the exec's own stdin
  ['pipe into a shell', ...sh('echo id | sh')],
  ['pipe through base64 into a shell', ...sh('echo aWQK | base64 -d | sh')],
  ['pipe into bash -s', ...sh("printf 'id\\n' | bash -s")],
  ['pipe into bash -s with args', ...sh('echo id | bash -s x y')],
  ['pipe into a group with a shell', ...sh('echo id | { read -r x; sh; }')],
  ['pipe into a loop with a shell', ...sh('echo id | while true; do sh; break; done')],
  ['here-string to a shell', ...sh('sh <<< id')],
  ['here-string with an expansion', ...sh('x=id; sh <<< "$x"')],
  ['here-doc to a shell', ...sh('X=i; sh <<EOF\n${X}d\nEOF')],
  ['here-doc body hides a quote', ...sh("cat <<EOF\nit's\nEOF\nid")],
  ['file redirect into a shell', ...sh('echo id > f; sh < f')],
  ['exec redirect then a shell', ...sh('echo id > f; exec < f; sh')],
  ['/dev/stdin as a script file', ...sh('echo id | sh /dev/stdin')],
  ['process substitution as a script file', ...sh('bash <(echo id)')],
  ['source of a process substitution', ...sh('source <(echo id)')],
  ['dot of /dev/stdin', ...sh('echo id | . /dev/stdin')],
  ['source of another descriptor', ...sh('source /dev/fd/3 3<<< id')],
  ['shell reading another descriptor', ...sh('bash /proc/self/fd/3 3<<< id')],
  ['process substitution reading a pipe', ...sh('echo id > >(sh)')],
  ['coproc shell', ...sh('coproc sh; echo id >&"${COPROC[1]}"')],
  ['named coproc group', ...sh('coproc X { id; }')],
  ['named coproc subshell reading its pipe', ...sh('coproc X (sh); echo id >&"${X[1]}"')],
  ['top-level bash -s with args', ['bash', '-s', 'x'], 'id'],
  // xargs appends run-time data
  ['xargs sh -c with the script appended', ...sh('echo id | xargs sh -c')],
  ['xargs sh with -c appended', ...sh("echo '-c id' | xargs sh")],
  ['xargs env with the program appended', ...sh('echo id | xargs env')],
  ['xargs -I in the program word', ...sh('echo id | xargs -I{} {}')],
  ['xargs -I in a script', ...sh("echo id | xargs -I@ sh -c '@'")],
  ['find -exec placeholder as the program', ...sh('find . -name id -exec {} \\;')],
  ['find -exec from a run-time word', ...sh('X=-exec; find . "$X" id \\;')],
  // shell options before -c
  ['bash -O extglob -c', ['bash', '-O', 'extglob', '-c', 'id']],
  ['bash +O extglob -c', ['bash', '+O', 'extglob', '-c', 'id']],
  ['bash --rcfile F -c', ['bash', '--rcfile', '/dev/null', '-c', 'id']],
  ['bash --init-file F -c', ['bash', '--init-file', '/dev/null', '-c', 'id']],
  ['unknown shell option', ['bash', '--frobnicate', 'x', '-c', 'id']],
  ['fish -C', ['fish', '-C', 'id']],
  ['zsh =cmd', ['zsh', '-c', '=id']],
  ['zsh precommand modifier', ['zsh', '-c', 'noglob id']],
  ['ksh93 ${ cmd; }', ['ksh', '-c', 'echo ${ id; }']],
  ['bash 5.3 ${ cmd; }', ...sh('echo ${ id; }')],
  ['bash 5.3 ${| cmd; }', ...sh('echo ${| id; }')],
  ['eval --', ...sh('eval -- id')],
  ['su with - and the user first', ['su', '-', 'root', '-c', 'id']],
  ['su with a glued -c', ['su', 'root', '-lcid']],
  ['script alone runs an interactive shell', ['script', '-q', '/dev/null'], 'id'],
  // glued and unknown wrapper options
  ['env -iS glued', ['env', '-iSid']],
  ['env -S then more args', ['env', '-S', 'sh', '-c', 'id']],
  ['env -S with options inside', ['env', '-S', '-i id']],
  ['env unknown option', ['env', '--frob', 'id']],
  ['nice glued -n', ['nice', '-n5', 'id']],
  ['stdbuf glued -o', ['stdbuf', '-oL', 'id']],
  ['time -p', ...sh('time -p id')],
  ['sudo glued -u', ['sudo', '-uroot', 'id']],
  ['exec -a glued', ...sh('exec -aname id')],
  ['flock -c after the file', ['flock', '/tmp/l', '-c', 'id']],
  ['timeout with --signal=', ['timeout', '--signal=KILL', '5', 'id']],
  ['setpriv', ['setpriv', '--reset-env', 'id']],
  ['prlimit', ['prlimit', '--nofile=64', 'id']],
  ['setarch with options after the architecture', ['setarch', 'x86_64', '-R', 'id']],
  ['setarch alias', ['linux64', 'id']],
  ['setarch with no program runs a shell on stdin', ['setarch', 'x86_64'], 'id'],
  ['sg runs its words through sh', ['sg', 'users', 'true; id']],
  ['runcon with options', ['runcon', '-t', 'x', 'id']],
  // a wrapper whose words are only known at run time
  ['env of a substitution', ...sh('env $(echo id)')],
  ['nice of a variable', ...sh('X=id; nice "$X"')],
  ['sh -c of an expanded script', ...sh('X=id; sh -c "$X"')],
  ['sh -c of a partly expanded script', ...sh('X=";id"; sh -c "echo $X"')],
  ['eval of a partly expanded string', ...sh('X=";id"; eval "echo $X"')],
  ['shell options from brace expansion', ...sh('sh {-c,id}')],
  ['env of a brace', ...sh('env {id,}')],
  // brace and glob in the program word
  ['brace expansion', ...sh('{id,}')],
  ['brace expansion inside', ...sh('i{d,}')],
  ['extglob', ...sh('shopt -s extglob; touch id; @(i)d')],
  ['glob', ...sh('touch id; i[d]')],
  // names bound at run time
  ['alias', ...sh('shopt -s expand_aliases\nalias x=id\nx')],
  ['alias in sh', ['sh', '-c', 'alias x=id\nx']],
  ['function keyword', ...sh('function f { id; }; f')],
  ['hash -p', ...sh('hash -p /usr/bin/id ls; ls')],
  // the history run again (stop 25's red team)
  ['fc -e', ...sh('set -o history; history -s x; fc -e id -1')],
  ['fc with FCEDIT', ...sh('set -o history; history -s x; FCEDIT=id fc -1')],
  ['fc -s', ...sh('set -o history; history -s id; fc -s')],
  ['fc -ls (bash runs it all the same)', ...sh('set -o history; history -s id; fc -ls')],
  ['fc -l -e -', ...sh('set -o history; history -s id; fc -l -e - id')],
  ['builtin fc', ...sh('set -o history; history -s id; builtin fc -s id')],
  ['command fc', ...sh('set -o history; history -s id; command -- fc -s id')],
  ['BASH_CMDS', ...sh('BASH_CMDS[ls]=/usr/bin/id; ls')],
  ['BASH_ALIASES', ...sh('shopt -s expand_aliases; BASH_ALIASES[x]=id\nx')],
  ['exported function', ['env', 'BASH_FUNC_ls%%=() { id; }', 'bash', '-c', 'ls']],
  // quoting forms
  ['$"…"', ...sh('$"id"')],
  ["$'\\U…'", ...sh("$'\\U00000069'd")],
  ["$'…' with an escaped quote", ...sh("echo $'\\'' ; id ; echo '")],
  ['redirect with a named fd first', ...sh('{fd}>/dev/null id')],
  // substitutions in odd places
  ['arithmetic substitution', ...sh('echo $(( $(id) ))')],
  ['arithmetic old form', ...sh('echo $[ $(id) ]')],
  ['arithmetic in an array subscript from a literal', ...sh("x='a[$(id)]'; echo $((x))")],
  ['case inside $(…)', ...sh("[[ -n $(case x in x) source /dev/stdin <<< 'nice `echo id`';; esac) ]]")],
  ['subshell first inside $(…)', ...sh('echo $( (true); id )')],
  ['here-doc inside $(…)', ...sh('[[ $(cat <<EOF\n)\nEOF\nid) ]]')],
  ['nested double quotes inside $(…)', ...sh('[[ $(echo "$(echo ")")"; id) ]]')],
  ['backticks inside $(…)', ...sh('[[ $(echo `echo )`; id) ]]')],
  ["$'…' inside $(…)", ...sh("[[ $(echo $'\\'' ; id ; echo ') ]]")],
  ['comment inside $(…)', ...sh('[[ $(# )\nid) ]]')],
  ['interactive shell runs PROMPT_COMMAND', ['env', 'PROMPT_COMMAND=id', 'bash', '-i']],
  ['PROMPT_COMMAND as a prefix', ...sh('PROMPT_COMMAND=id bash -i')],
  ['PROMPT_COMMAND exported', ...sh('export PROMPT_COMMAND=id')],
  ['BASH_ENV from a pipe', ...sh('echo id | BASH_ENV=/dev/stdin bash -c :')],
  ['PS4 from a run-time value', ...sh('X=$(cat f); PS4="$X" bash -xc :')],
  ['<< inside (( … )) is a shift, not a here-doc', ...sh('(( x = 1 << 2 ))\nid\n2')],
  ['$(…) inside (( … ))', ...sh('(( x = $(id) ))')],
  ['trap', ...sh('trap id EXIT')],
  ['trap with --', ...sh("trap -- 'id' EXIT")],
  ['mapfile callback', ...sh('mapfile -C id -c 1 < /etc/hostname')],
  ['compgen -C', ...sh('compgen -C id x')],
  ['PS4 literal', ...sh("PS4='$(id)' bash -xc :")],
];

/** [class, argv, environment of the exec] */
const THROUGH_ENV: [string, string[], Record<string, string>][] = [
  ['exported function in the exec environment', ['bash', '-c', 'ls'], { 'BASH_FUNC_ls%%': '() { id; }' }],
  ['PROMPT_COMMAND in the exec environment', ['bash', '-c', 'ls'], { PROMPT_COMMAND: 'id' }],
  ['BASH_ENV reading the exec stdin', ['bash', '-c', ':'], { BASH_ENV: '/dev/stdin' }],
];

describe('ways past a deny rule', () => {
  it.each(THROUGH_ENV)('%s', (_class, argv, env) => {
    expect(decideCommand(policy, argv, 'id', env).action).toBe('deny');
  });

  it('lets fc list the history (-l, -ln, -lr), which runs nothing', () => {
    for (const script of ['fc -l', 'fc -ln -5', 'fc -lr', 'builtin fc -l'])
      expect(decideCommand(policy, ['bash', '-c', script]).action).toBe('allow');
  });

  it('does not read a script longer than it can read at once: dynamic', () => {
    expect(decideCommand(policy, ['sh', '-c', `${'true; '.repeat(30_000)}echo hi`]).source).toBe('dynamic');
    expect(decideCommand(policy, ['sh', '-c', `${'true; '.repeat(1000)}echo hi`]).action).toBe('allow');
  });

  it('gives up on what is too deep or too costly to read, as dynamic', () => {
    for (const script of ['('.repeat(200_000), '$('.repeat(50_000), '${'.repeat(50_000), '"$('.repeat(50_000)]) {
      expect(decideCommand(policy, ['bash', '-c', script]).source).toBe('dynamic');
    }
  });

  it('never throws on malformed escapes', () => {
    for (const script of ["$'\\x'", "$'\\u'", "$'\\UFFFFFFFF'", "$'\\c'", "'", '"', '$(', '`', '<<', '${', 'case x in', '[[ x']) {
      expect(() => decideCommand(policy, ['bash', '-c', script]), script).not.toThrow();
    }
  });

  it.each(BYPASSES)('%s', (_class, argv, stdin) => {
    const d = decideCommand(policy, argv, stdin);
    expect(d.action, `${argv.join(' ')} → ${d.reason}`).toBe('deny');
  });
});
