// How `warden serve` hears it should stop. One Ctrl-C or `timeout`'s SIGTERM reaches serve more than
// once: the terminal (or `timeout`) signals the whole process group, and `npm start`'s script
// forwards the same signal again. Serve's listeners used to be `once`: a copy arriving after the
// first found none, and Node's default action killed serve half-way through removing its warm pool.
// So the listeners stay for the whole life of the process: the first signal starts the stop, later
// ones only say it is under way (SIGKILL remains the way to stop at once). Serve ends by itself once
// closed: nothing of its own is left to keep Node's loop alive. (The Podman service serve starts is
// out of the group's reach: owned-service.ts.)
import { msFromEnv } from '../engine/env-ms.js';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * Installed before anything is started, so a signal during start-up is a stop, not a kill. Resolves
 * with the first stop signal; the listeners are never removed, so a copy that comes after the close
 * (a forwarded one, late) cannot kill the process in its last moment either.
 */
export function onceStopped(onRepeat: (signal: StopSignal) => void): Promise<StopSignal> {
  let first: StopSignal | null = null;
  return new Promise<StopSignal>((resolve) => {
    const listener = (signal: StopSignal) => {
      if (first) return onRepeat(signal);
      first = signal;
      // Whoever read serve's output may have gone with the rest of the group: a write to its closed
      // pipe must not end serve (an unhandled EPIPE) while it is still draining.
      for (const out of [process.stdout, process.stderr]) out.on('error', () => undefined);
      resolve(signal);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, listener);
  });
}

/** How long a stop may take before serve ends anyway: WARDEN_STOP_BOUND_MS, or 60 s; a bad value is refused. */
export function stopBoundMs(env: NodeJS.ProcessEnv): number {
  return msFromEnv(env, 'WARDEN_STOP_BOUND_MS', 60_000);
}

/** True once `work` has settled (either way), false if `ms` pass first. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = work.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}
