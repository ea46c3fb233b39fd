// An exec as the ledger sees it: exec.started is durable before the command starts (with any entries
// a caller must have written in the same transaction, the gateway's decision: one fsync, not two),
// then exec.finished with each stream's digest and preview, or exec.failed. The engine's execs all
// come through here, so every door's command leaves the same record.
import { createHash } from 'node:crypto';
import type { ExecRequest, ExecResult, TerminalSize } from '../../shared/types/exec.js';
import type { ExecRunResponse } from '../../shared/contracts/methods.js';
import type { SandboxInfo } from '../../shared/types/sandbox.js';
import { appendDurably, type AuditRecord, type AuditSink } from './audit-sink.js';
import { OutputPreview } from './output-preview.js';
import type { PodmanConnection } from './podman/connection.js';
import { egressOf } from './egress/egress-registry.js';
import { argvOf, runExec, type ExecHandlers } from './podman/exec-session.js';
import type { CommandInput } from './podman/exec-handlers.js';
import type { RunningExecs } from './running-execs.js';

/** Entries to write in the same transaction as exec.started (a gateway's decision), and a hook once they are durable. */
export interface ExecAudit {
  before?: AuditRecord[];
  onRecorded?: () => void;
}

export interface ExecRecorder {
  conn: PodmanConnection;
  /** Where the command is known while it runs (a pause ends it first). */
  running: RunningExecs;
  audit: AuditSink;
  /** The engine's entry for this sandbox (its actor; the audit context may put an agent's name in). */
  entry: (sandboxId: string, kind: string, payload: unknown) => AuditRecord;
}

export async function recordedExec(
  r: ExecRecorder,
  sandbox: SandboxInfo,
  request: ExecRequest,
  handlers: ExecHandlers,
  audit: ExecAudit,
): Promise<ExecResult & { stdoutDigest: string; stderrDigest: string }> {
  const argv = argvOf(request.cmd);
  // A command on a pseudo-terminal, or with input streamed while it runs, says so from its start.
  const how = { ...(handlers.openInput ? { stdin: 'streamed' } : {}), ...(handlers.pty ? { pty: handlers.pty } : {}) };
  const started = r.entry(sandbox.id, 'exec.started', { argv, cwd: request.cwd ?? null, timeoutMs: request.timeoutMs ?? null, ...how });
  await appendDurably(r.audit, [...(audit.before ?? []), started]);
  const out = new OutputPreview();
  const err = new OutputPreview();
  const hashOut = createHash('sha256');
  const hashErr = createHash('sha256');
  // Streamed input (a client's stdin, a PTY's keys) is hashed as it is given: the entry holds its digest.
  const given = handlers.openInput ? { hash: createHash('sha256'), bytes: 0 } : null;
  const openInput = (input: CommandInput) =>
    handlers.openInput!({
      write: (data) => {
        given!.hash.update(data);
        given!.bytes += data.length;
        return input.write(data);
      },
      end: () => input.end(),
      ...(input.resize ? { resize: (size: TerminalSize) => input.resize!(size) } : {}),
    });
  try {
    audit.onRecorded?.();
    // The command's way out is up before it runs (this process may not be the one that started the sandbox).
    if (sandbox.network === 'egress') await egressOf(r.conn).ensure(sandbox.id);
    const result = await r.running.run(sandbox.id, handlers.signal, (signal) =>
      runExec(r.conn, sandbox.id, request, {
        onStdout: (c) => {
          hashOut.update(c);
          out.add(c);
          return handlers.onStdout?.(c);
        },
        onStderr: (c) => {
          hashErr.update(c);
          err.add(c);
          return handlers.onStderr?.(c);
        },
        ...(handlers.drain ? { drain: handlers.drain } : {}),
        ...(handlers.allowance ? { allowance: handlers.allowance } : {}),
        signal,
        ...(handlers.openInput ? { openInput } : {}),
        ...(handlers.pty ? { pty: handlers.pty } : {}),
      }),
    );
    const digests = { stdoutDigest: hashOut.digest('hex'), stderrDigest: hashErr.digest('hex') };
    const input = given ? { stdinBytes: given.bytes, stdinDigest: given.hash.digest('hex') } : {};
    await appendDurably(r.audit, [
      r.entry(sandbox.id, 'exec.finished', { argv, ...result, ...digests, ...input, stdoutPreview: out.text(), stderrPreview: err.text() }),
    ]);
    return { ...result, ...digests };
  } catch (error) {
    await appendDurably(r.audit, [r.entry(sandbox.id, 'exec.failed', { argv, error: (error as Error).message })]);
    throw error;
  }
}

/** A collected exec as the UI's `exec.run` answers it: the result's figures and both outputs whole, in base64. */
export function execRunResponse(result: ExecResult, stdout: Buffer[], stderr: Buffer[]): ExecRunResponse {
  const { exitCode, durationMs, timedOut, stdoutBytes, stderrBytes, truncated, oomKilled } = result;
  return {
    ...{ exitCode, durationMs, timedOut, stdoutBytes, stderrBytes, truncated, oomKilled },
    stdoutBase64: Buffer.concat(stdout).toString('base64'),
    stderrBase64: Buffer.concat(stderr).toString('base64'),
  };
}
