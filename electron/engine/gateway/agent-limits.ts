// Limits on one agent that no run key resets: calls per minute, execs at once, output per hour, and
// one lock per agent under which sandboxes are counted and created. Runs bound one piece of work;
// the agent picks its run keys, so these bound the agent itself. In memory, per process.
import type { AgentLimitsPolicy } from '../../../shared/types/policy.js';
import type { OutputAllowance } from '../podman/output-sink.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
/** Idle agents' state is dropped past this many agents (a full bucket and nothing running is the fresh state). */
const MAX_IDLE_AGENTS = 1000;

/** A bucket of `capacity` units, refilled evenly over `periodMs`: `capacity` per period, bursts up to it. */
export class TokenBucket {
  private level: number;
  private at: number;

  constructor(
    private capacity: number,
    private readonly periodMs: number,
    private readonly now: () => number,
  ) {
    this.level = capacity;
    this.at = now();
  }

  /** What is in the bucket now (a policy change of capacity applies from now, the level kept within it). */
  available(capacity = this.capacity): number {
    const t = this.now();
    this.level = Math.min(capacity, this.level + ((t - this.at) * capacity) / this.periodMs);
    this.capacity = capacity;
    this.at = t;
    return Math.floor(this.level);
  }

  /** Takes up to n (all-or-part); returns what it took. */
  take(n: number, capacity = this.capacity): number {
    const got = Math.max(0, Math.min(n, this.available(capacity)));
    this.level -= got;
    return got;
  }

  full(): boolean {
    return this.available() >= this.capacity;
  }
}

/** One agent at a time through run(): later callers wait their turn, in order. */
export class AsyncMutex {
  private tail: Promise<unknown> = Promise.resolve();
  waiting = 0;

  run<T>(body: () => Promise<T>): Promise<T> {
    this.waiting++;
    const result = this.tail.then(body);
    this.tail = result.then(
      () => this.waiting--,
      () => this.waiting--,
    );
    return result;
  }
}

class AgentState {
  readonly calls: TokenBucket;
  readonly output: TokenBucket;
  execs = 0;
  readonly creates = new AsyncMutex();

  constructor(limits: AgentLimitsPolicy, now: () => number) {
    this.calls = new TokenBucket(limits.callsPerMinute, MINUTE, now);
    this.output = new TokenBucket(limits.outputBytesPerHour, HOUR, now);
  }
}

export interface LimitRefusal {
  source: string;
  reason: string;
  message: string;
  hint: string;
}

export class AgentLimits {
  private readonly agents = new Map<string, AgentState>();

  constructor(
    private readonly limits: () => AgentLimitsPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  private state(agent: string): AgentState {
    let s = this.agents.get(agent);
    if (!s) {
      if (this.agents.size >= MAX_IDLE_AGENTS) this.dropIdle();
      this.agents.set(agent, (s = new AgentState(this.limits(), this.now)));
    }
    return s;
  }

  private dropIdle(): void {
    for (const [name, s] of this.agents)
      if (s.execs === 0 && s.creates.waiting === 0 && s.calls.full() && s.output.full()) this.agents.delete(name);
  }

  /** One call starts: takes a token from the agent's calls-per-minute bucket, or says why not. */
  admitCall(agent: string): LimitRefusal | null {
    const lim = this.limits();
    if (this.state(agent).calls.take(1, lim.callsPerMinute) === 1) return null;
    return {
      source: 'agents.callsPerMinute',
      reason: `agent ${agent} has made its ${lim.callsPerMinute} calls of the last minute`,
      message: `rate limit: agent ${agent} may start ${lim.callsPerMinute} tool calls per minute, whatever its runs`,
      hint: 'slow down and retry in a few seconds, or raise agents.callsPerMinute in the policy',
    };
  }

  /** One exec starts running; the release it returns must be called when it ends. */
  admitExec(agent: string): { release: () => void } | LimitRefusal {
    const lim = this.limits();
    const s = this.state(agent);
    if (s.execs >= lim.concurrentExecs) {
      return {
        source: 'agents.concurrentExecs',
        reason: `agent ${agent} already has ${s.execs} execs running`,
        message: `limit: agent ${agent} may run ${lim.concurrentExecs} execs at once, whatever its runs`,
        hint: 'wait for one to finish, or raise agents.concurrentExecs in the policy',
      };
    }
    s.execs++;
    let released = false;
    return {
      release: () => {
        if (!released) s.execs--;
        released = true;
      },
    };
  }

  /** Output the agent may still receive this hour (for a refusal before an exec starts). */
  outputLeft(agent: string): number {
    return this.state(agent).output.available(this.limits().outputBytesPerHour);
  }

  /**
   * An exec's allowance: each chunk is charged against the run's budget and the agent's hourly
   * output at once, granting at most what both have left.
   */
  allowance(agent: string, run: { left(): number; charge(n: number): void }): OutputAllowance {
    const s = this.state(agent);
    return {
      take: (n) => {
        const cap = this.limits().outputBytesPerHour;
        const got = Math.max(0, Math.min(n, run.left(), s.output.available(cap)));
        s.output.take(got, cap);
        run.charge(got);
        return got;
      },
    };
  }

  /** Runs body under the agent's create lock: counting its sandboxes and creating one are one step. */
  underCreateLock<T>(agent: string, body: () => Promise<T>): Promise<T> {
    return this.state(agent).creates.run(body);
  }
}

/** The user's execs: charged to the run's budget only (the agent limits do not bind the user). */
export function runOnlyAllowance(run: { outputLeft(): number; outputBytes: number }): OutputAllowance {
  return {
    take: (n) => {
      const got = Math.min(n, run.outputLeft());
      run.outputBytes += got;
      return got;
    },
  };
}
