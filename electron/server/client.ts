// A client of a running Warden server: for the CLI, `warden mcp` and tests. The token goes in the
// Authorization header only, never in a URL.
import { WardenError, fromErrorInfo, type ErrorInfo } from '../../shared/errors.js';
import type { ApiExecBody, ExecStreamEvent, FileList, FileWritten, TokenInfo } from '../../shared/types/api.js';
import type { ApprovalDecision, ApprovalInfo, RunDetail, RunInfo } from '../../shared/types/run.js';
import type { SandboxInfo, SandboxSpecInput } from '../../shared/types/sandbox.js';

export interface ExecStreamResult {
  code: number;
  durationMs: number;
  timedOut: boolean;
  truncated: boolean;
  stdoutBytes: number;
  stderrBytes: number;
  oomKilled: boolean;
  callId: string;
  stdout: Buffer;
  stderr: Buffer;
}

export class WardenClient {
  constructor(
    readonly url: string,
    private readonly token: string,
    private readonly runKey: string | null = null,
  ) {}

  withRun(runKey: string | null): WardenClient {
    return new WardenClient(this.url, this.token, runKey);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, ...(this.runKey ? { 'x-warden-run': this.runKey } : {}), ...extra };
  }

  async raw(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    try {
      const isBytes = Buffer.isBuffer(body);
      return await fetch(`${this.url}${path}`, {
        method,
        headers: this.headers({ ...(body !== undefined ? { 'content-type': isBytes ? 'application/octet-stream' : 'application/json' } : {}), ...headers }),
        ...(body !== undefined ? { body: isBytes ? new Uint8Array(body) : JSON.stringify(body) } : {}),
      });
    } catch (err) {
      throw new WardenError('E_ENGINE_UNREACHABLE', `cannot reach Warden at ${this.url}: ${(err as Error).message}`, 'is `warden serve` (or the app) running?');
    }
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.raw(method, path, body);
    const json = (await res.json().catch(() => null)) as { result?: T; error?: ErrorInfo } | null;
    if (!json) throw new WardenError('E_INTERNAL', `unexpected answer from Warden (${res.status})`);
    if (json.error) throw fromErrorInfo(json.error);
    return json.result as T;
  }

  listSandboxes = () => this.call<SandboxInfo[]>('GET', '/v1/sandboxes');
  createSandbox = (spec: SandboxSpecInput | Record<string, unknown>) => this.call<SandboxInfo>('POST', '/v1/sandboxes', spec);
  destroySandbox = (id: string) => this.call<{ id: string; name: string }>('DELETE', `/v1/sandboxes/${encodeURIComponent(id)}`);
  listRuns = () => this.call<RunInfo[]>('GET', '/v1/runs');
  getRun = (id: string) => this.call<RunDetail>('GET', `/v1/runs/${encodeURIComponent(id)}`);
  listApprovals = () => this.call<ApprovalInfo[]>('GET', '/v1/approvals');
  decide = (id: string, decision: ApprovalDecision) => this.call<ApprovalInfo>('POST', `/v1/approvals/${encodeURIComponent(id)}`, { decision });
  whoami = () => this.call<Pick<TokenInfo, 'agent' | 'role'>>('GET', '/v1/whoami');

  listFiles(id: string, path?: string): Promise<FileList> {
    return this.call('GET', `/v1/sandboxes/${encodeURIComponent(id)}/files/list${path ? `?path=${encodeURIComponent(path)}` : ''}`);
  }

  writeFile(id: string, path: string, data: Buffer | string): Promise<FileWritten> {
    return this.call('PUT', `/v1/sandboxes/${encodeURIComponent(id)}/files?path=${encodeURIComponent(path)}`, Buffer.from(data));
  }

  async readFile(id: string, path: string): Promise<Buffer> {
    const res = await this.raw('GET', `/v1/sandboxes/${encodeURIComponent(id)}/files?path=${encodeURIComponent(path)}`);
    if (res.status !== 200) {
      const json = (await res.json().catch(() => null)) as { error?: ErrorInfo } | null;
      throw json?.error ? fromErrorInfo(json.error) : new WardenError('E_INTERNAL', `read failed (${res.status})`);
    }
    return Buffer.from(await res.arrayBuffer());
  }

  /**
   * Runs a command, handing each event to onEvent as it arrives (a returned promise is awaited: the
   * stream is not read further until it settles); resolves with the collected result. With
   * collect false the output is not kept (the caller streams it), so memory stays flat.
   */
  async exec(id: string, body: ApiExecBody, onEvent?: (e: ExecStreamEvent) => unknown, opts: { collect?: boolean } = {}): Promise<ExecStreamResult> {
    const res = await this.raw('POST', `/v1/sandboxes/${encodeURIComponent(id)}/exec`, body);
    if (res.status !== 200 || !res.body) {
      const json = (await res.json().catch(() => null)) as { error?: ErrorInfo } | null;
      throw json?.error ? fromErrorInfo(json.error) : new WardenError('E_INTERNAL', `exec failed (${res.status})`);
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let result: ExecStreamResult | null = null;
    let pending = '';
    const decoder = new TextDecoder();
    const collect = opts.collect !== false;
    const handle = async (line: string) => {
      if (!line) return;
      const e = JSON.parse(line) as ExecStreamEvent;
      const waited = onEvent?.(e);
      if (waited instanceof Promise) await waited;
      if ((e.type === 'stdout' || e.type === 'stderr') && collect) (e.type === 'stdout' ? out : err).push(Buffer.from(e.data, e.encoding === 'base64' ? 'base64' : 'utf8'));
      else if (e.type === 'exit') result = { code: e.code, durationMs: e.durationMs, timedOut: e.timedOut, truncated: e.truncated, stdoutBytes: e.stdoutBytes, stderrBytes: e.stderrBytes, oomKilled: e.oomKilled, callId: e.callId, stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
      else if (e.type === 'error') throw fromErrorInfo(e.error as ErrorInfo);
    };
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        await handle(line);
      }
    }
    await handle(pending);
    if (!result) throw new WardenError('E_ENGINE_UNREACHABLE', 'the exec stream ended without an exit event');
    return result;
  }
}
