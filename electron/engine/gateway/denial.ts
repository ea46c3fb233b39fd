// Why the gateway stopped a call, with the HTTP status a door should use and when to retry. Each
// stop the call pipeline knows has a named constructor here, holding both what the caller is told
// (message, hint) and what the ledger's decision says (which rule, in a few words), so the pipeline
// reads as its steps and every wording lives in one place.
import { WardenError, toErrorInfo, type ErrorCode } from '../../../shared/errors.js';
import type { CallDecision, DenyReason } from '../../../shared/types/run.js';
import type { LimitRefusal } from './agent-limits.js';

/** The rule that stopped a call and why, as its policy.denied entry records it. */
export interface DenialSource {
  source: string;
  reason: string;
}

export class GatewayDenial extends WardenError {
  /** What the record says; without it, "policy" and the message. */
  recorded?: DenialSource;

  constructor(
    readonly reason: DenyReason,
    message: string,
    hint?: string,
    readonly retryAfterMs?: number,
    code: ErrorCode = 'E_POLICY_DENIED',
  ) {
    super(code, message, hint);
  }

  /** 503 for a breaker that will let a probe through later; 400 for a malformed ask; else 403. */
  get status(): number {
    if (this.reason === 'breaker') return 503;
    return this.code === 'E_BAD_INPUT' ? 400 : 403;
  }

  /** The decision a denied call records. */
  decision(): CallDecision {
    return {
      action: 'deny',
      source: this.recorded?.source ?? 'policy',
      reason: this.recorded?.reason ?? this.message,
      denyReason: this.reason,
    };
  }

  /** The same denial, told with another message. */
  withMessage(message: string): GatewayDenial {
    return Object.assign(new GatewayDenial(this.reason, message, this.hint, this.retryAfterMs, this.code), { recorded: this.recorded });
  }

  private static of(reason: DenyReason, recorded: DenialSource, message: string, hint?: string): GatewayDenial {
    return Object.assign(new GatewayDenial(reason, message, hint), { recorded });
  }

  /** Any error a verdict threw: a denial as it is, anything else as a policy denial with its code. */
  static fromVerdict(err: unknown): GatewayDenial {
    if (err instanceof GatewayDenial) return err;
    const info = toErrorInfo(err);
    return new GatewayDenial('policy', info.message, info.hint, undefined, info.code);
  }

  static runEnded(run: { id: string; status: string; endReason?: string | null }): GatewayDenial {
    return GatewayDenial.of(
      'budget',
      { source: 'run', reason: `run ${run.id} has ${run.status}` },
      `run ${run.id} has ended${run.endReason ? `: ${run.endReason}` : ''}; no more calls in it`,
      'start a new run (another X-Warden-Run)',
    );
  }

  /** Policy asked for a snapshot before the call and it failed: the call is refused rather than run unprotected. */
  static snapshotFailed(why: 'run-start' | 'command', source: string, err: unknown): GatewayDenial {
    const info = toErrorInfo(err);
    const asked =
      why === 'run-start' ? 'a snapshot at the start of each run (snapshots.onRunStart)' : `a snapshot before this command (${source})`;
    return GatewayDenial.of(
      'snapshot-failed',
      { source: why === 'run-start' ? 'snapshots.onRunStart' : source, reason: `the snapshot failed: ${info.message}` },
      `policy asks for ${asked}, and it could not be taken: ${info.message}; the call was not run unprotected`,
      info.hint ?? 'fix what the snapshot needs (a running sandbox, room for its archive), then call again',
    );
  }

  static agentLimit(limited: LimitRefusal): GatewayDenial {
    return GatewayDenial.of('budget', { source: limited.source, reason: limited.reason }, limited.message, limited.hint);
  }

  static wallTime(ms: number): GatewayDenial {
    return GatewayDenial.of(
      'budget',
      { source: 'budgets.wallTimeMs', reason: `the run's wall time of ${ms} ms is used` },
      `budget exceeded: the run's wall time (${ms} ms) is used`,
      'start a new run',
    );
  }

  static maxCalls(n: number): GatewayDenial {
    return GatewayDenial.of(
      'budget',
      { source: 'budgets.maxCalls', reason: `the run has made its ${n} calls` },
      `budget exceeded: the run may make ${n} tool calls and has made them`,
      'start a new run, or raise budgets.maxCalls in the policy',
    );
  }

  /** `failures`: the policy's threshold, for the record; `inARow`: the run's count now, for the caller. */
  static breakerOpen(failures: number, inARow: number, retryAfterMs: number): GatewayDenial {
    const denial = new GatewayDenial(
      'breaker',
      `the run's breaker is open after ${inARow} failed calls in a row; retry in ${Math.ceil(retryAfterMs / 1000)} s`,
      'look at why the calls fail; one probe call is let through after the cool-down',
      retryAfterMs,
      'E_CONFLICT',
    );
    denial.recorded = { source: 'breaker', reason: `the breaker is open after ${failures} failures in a row` };
    return denial;
  }

  /** `watching`: whether anyone could have answered (a UI or CLI was following approvals). */
  static approvalTimeout(summary: string, timeoutMs: number, watching: boolean): GatewayDenial {
    return new GatewayDenial(
      'approval-timeout',
      `${summary}: needs a person's approval and nobody approved within ${timeoutMs / 1000} s (${watching ? 'nobody answered' : 'no one is watching: headless, so denied'})`,
      'approve it in the Warden app or with `warden run approve <id>`, or change the policy',
    );
  }

  static approvalDenied(summary: string, by: string | null): GatewayDenial {
    return new GatewayDenial('approval-denied', `${summary}: denied by ${by}`);
  }

  /** The policy's own deny (a rule, or a program it cannot see through). */
  static byPolicy(verdict: { denyReason?: DenyReason; reason: string; source: string }): GatewayDenial {
    return new GatewayDenial(
      verdict.denyReason ?? 'policy',
      `denied by policy: ${verdict.reason}`,
      verdict.source === 'dynamic'
        ? 'write the program name out literally so policy can check it'
        : 'the policy is in $WARDEN_HOME/policy.yaml',
    );
  }

  static runOutput(bytes: number): GatewayDenial {
    return new GatewayDenial(
      'budget',
      `budget exceeded: the run has received its ${bytes} bytes of output`,
      'start a new run, or raise budgets.outputBytes',
    );
  }

  static agentOutput(agent: string, bytesPerHour: number): GatewayDenial {
    return new GatewayDenial(
      'budget',
      `limit: agent ${agent} has received its ${bytesPerHour} bytes of output of the last hour, whatever its runs`,
      'wait, or raise agents.outputBytesPerHour in the policy',
    );
  }

  static tooManySandboxes(agent: string, count: number): GatewayDenial {
    return new GatewayDenial('create-limits', `agent ${agent} already has ${count} sandboxes, the most policy allows`, 'destroy one first');
  }
}

export function isGatewayDenial(err: unknown): err is GatewayDenial {
  return err instanceof GatewayDenial;
}
