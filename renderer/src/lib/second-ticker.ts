// One timer for every display that changes once a second (uptimes in a list of fifty sandboxes):
// all are updated in the same task, so the browser lays out once instead of fifty times a second.
const listeners = new Set<() => void>();
let timer: number | null = null;

/** Calls fn now and then every second until the returned function is called. */
export function everySecond(fn: () => void): () => void {
  listeners.add(fn);
  fn();
  timer ??= window.setInterval(() => {
    for (const listener of listeners) listener();
  }, 1000);
  return () => {
    listeners.delete(fn);
    if (listeners.size === 0 && timer !== null) {
      window.clearInterval(timer);
      timer = null;
    }
  };
}
