// The probe Warden runs inside a sandbox to attest it: one POSIX sh script (no python assumed) that
// prints what the sandbox sees in named sections; verdict.ts judges them. Pure, so the script is
// unit-tested and one exec carries a plain attestation. `--deep` adds tries that prove limits by
// meeting them in child processes, leaving the sandbox itself running.

export interface ProbeOptions {
  /** Host paths that must not exist inside (engine sockets, WARDEN_HOME). */
  forbiddenPaths: string[];
  /** Try a write to / (only when a read-only root was promised). */
  readOnlyRoot: boolean;
  deep: null | {
    /** Processes to try to start: past the promised pids limit. */
    forkTries: number;
    /** Bytes to allocate in a child: past the promised memory limit; null skips the try. */
    allocateBytes: number | null;
  };
}

export const SECTION_MARK = '@@warden@@';

/** Single-quoted for sh. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const PLAIN = `s() { printf '\\n${SECTION_MARK} %s\\n' "$1"; }
first() { for f in "$@"; do if [ -r "$f" ]; then printf '%s ' "$f"; cat "$f"; return; fi; done; echo none; }
s version; cat /proc/version 2>&1
s status; grep -E '^(Cap[A-Za-z]+|NoNewPrivs|Seccomp):' /proc/self/status 2>&1
s uid_map; cat /proc/self/uid_map 2>&1
s dmesg; dmesg 2>&1 | head -n 3
s netdev; cat /proc/net/dev 2>&1
s mountinfo; cat /proc/self/mountinfo 2>&1
s memory; first /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max
s pids; first /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max
`;

// Write refused → the shell's own message (EROFS reads "Read-only file system").
const ROOT_WRITE = `s rootwrite; f=/.warden-attest-$$; if err=$( (: > "$f") 2>&1 ); then rm -f "$f"; echo written; else echo "refused: $err"; fi
`;

// Background sleeps until a fork fails; dash leaves the subshell on that failure, so pids go to a
// file and the parent kills them all (kill and read are built-ins: no fork needed to clean up).
function forkTry(tries: number): string {
  if (tries === 0) return `s deep.pids; echo "no-try"\n`;
  return `s deep.pids; d=/dev/shm; [ -w "$d" ] || d=/tmp; pf="$d/.warden-attest-pids.$$"; : > "$pf"
( i=0; while [ $i -lt ${tries} ]; do sleep 600 & echo $! >> "$pf"; i=$((i+1)); done ) 2> "$pf.err"
echo "exit=$?"; n=0; while read -r p; do kill -9 "$p" 2>/dev/null; n=$((n+1)); done < "$pf"
echo "started=$n"; head -c 300 "$pf.err"; rm -f "$pf" "$pf.err"
`;
}

// Filled, not just reserved (a calloc'd bytearray would never touch its pages); the allocator's own
// status is kept ($? of an assignment from $(…)), 137 meaning the OOM killer's SIGKILL.
function allocTry(bytes: number | null): string {
  if (bytes === null) return `s deep.memory; echo "no-try"\n`;
  return `s deep.memory
if command -v python3 >/dev/null 2>&1; then echo "with=python3"; out=$(python3 -c "b'x' * ${bytes}" 2>&1); echo "exit=$?"
elif command -v perl >/dev/null 2>&1; then echo "with=perl"; out=$(perl -e '$x = "x" x ${bytes}' 2>&1); echo "exit=$?"
else echo "no-allocator"; out=; fi
printf '%s\\n' "$out" | tail -n 1
`;
}

const USERNS_TRY = `s deep.userns; if command -v unshare >/dev/null 2>&1; then out=$(unshare -U true 2>&1); echo "exit=$?"; printf '%s\\n' "$out" | head -n 1; else echo "no-unshare"; fi
`;

// Writes each limit file's own value back: refused is the promise; accepted would change nothing.
const CGROUP_WRITE_TRY = `s deep.cgroup
for f in /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu.max; do
  [ -e "$f" ] || continue; v=$(cat "$f" 2>/dev/null); if err=$( (printf '%s\\n' "$v" > "$f") 2>&1 ); then echo "$f written"; else echo "$f refused: $err"; fi
done
`;

export function buildProbe(o: ProbeOptions): string {
  const reach = `s reachable; for p in ${o.forbiddenPaths.map(shQuote).join(' ')}; do [ -e "$p" ] && echo "$p"; done; true\n`;
  let script = PLAIN + reach + (o.readOnlyRoot ? ROOT_WRITE : '');
  if (o.deep) script += forkTry(o.deep.forkTries) + allocTry(o.deep.allocateBytes) + USERNS_TRY + CGROUP_WRITE_TRY;
  return script;
}

/** The probe's output → its sections by name. */
export function parseSections(output: string): Map<string, string> {
  const sections = new Map<string, string>();
  let name: string | null = null;
  let lines: string[] = [];
  const flush = () => {
    if (name !== null) sections.set(name, lines.join('\n').trim());
  };
  for (const line of output.split('\n')) {
    if (line.startsWith(`${SECTION_MARK} `)) {
      flush();
      name = line.slice(SECTION_MARK.length + 1).trim();
      lines = [];
    } else if (name !== null) lines.push(line);
  }
  flush();
  return sections;
}
