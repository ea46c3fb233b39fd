// CPU time of processes from /proc (utime + stime), and the machine's own busy share.
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)"; comm may hold spaces. [0] is field 3 (state), [1] ppid, [11] utime, [12] stime.
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU seconds used so far by these processes (the ones still alive). */
export function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const f = statFields(pid);
    if (f) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks / TICK;
}

/** Every live process under root (not root itself). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const f = statFields(pid);
    if (!f) continue;
    const ppid = Number(f[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** Busy and total jiffies of the whole machine (all cores), from /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((s, x) => s + x, 0);
  const idle = cpu[3]! + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}

/** CPU use in percent of one core per process group, and of the whole machine (both cores). */
export interface CpuShares {
  serve: number;
  podman: number;
  chromium: number;
  machine: number;
}

/** Starts measuring the CPU of `warden serve`, the Podman services and Chromium; call the result to stop. */
export function cpuMeter(servePid: number, podmanSocket: string): () => CpuShares {
  const mine = descendants(process.pid);
  // serve starts Podman services of its own (one per runtime): they count as Podman, not as serve.
  const podman = mine.filter((p) => commandLine(p).includes(podmanSocket) || /^podman .*system service/.test(commandLine(p)));
  const serve = [servePid, ...descendants(servePid)].filter((p) => !podman.includes(p));
  const chromium = mine.filter((p) => !serve.includes(p) && !podman.includes(p) && /chrom/i.test(commandLine(p)));
  const read = () => ({
    serve: cpuSeconds(serve),
    podman: cpuSeconds(podman),
    chromium: cpuSeconds(chromium),
    machine: machineTicks(),
    at: performance.now(),
  });
  const before = read();
  return () => {
    const after = read();
    const share = (k: 'serve' | 'podman' | 'chromium') => (100 * (after[k] - before[k])) / ((after.at - before.at) / 1000);
    const machine = (100 * (after.machine.busy - before.machine.busy)) / (after.machine.total - before.machine.total);
    return { serve: share('serve'), podman: share('podman'), chromium: share('chromium'), machine };
  };
}
