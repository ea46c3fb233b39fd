// Why a sandbox ended, when Podman's own fields do not say. Under gVisor the memory or pids limit
// does not kill one process: the host ends the whole sandbox, and inspect reports only an exit code
// with OOMKilled=false. Measured on these hosts (runsc 20240729, systrap): the memory limit gives
// exit 137 (the host's OOM killer sends SIGKILL to the sandbox), the pids limit exit 2 (gVisor's
// kernel cannot start a thread and stops); Warden's own stop gives 143 or 0. So those two codes
// are named for what they are on a runsc sandbox, rather than left as a mystery exit.

export function exitReason(runtime: string, exitCode: number | null, oomKilled: boolean): string | null {
  if (oomKilled) return 'the kernel’s OOM killer ended it at its memory limit';
  if (runtime !== 'runsc' || exitCode === null) return null;
  if (exitCode === 137) {
    return 'the gVisor sandbox was killed (SIGKILL): under gVisor reaching the memory limit ends the whole sandbox, so this is its memory limit unless something outside killed it';
  }
  if (exitCode === 2) {
    return 'gVisor’s kernel stopped (exit 2): it could not start another process, which is what reaching the pids limit does under gVisor';
  }
  return null;
}
