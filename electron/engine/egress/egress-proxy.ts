// Warden's egress proxy: the far end of every connection a program in an `egress` sandbox opens to
// HTTP_PROXY (each one arrives on the sandbox's own Unix socket, egress-registry.ts, which is how the
// sandbox is known). It reads the request's head by hand (http-head.ts) and hands the connection on:
// CONNECT to egress-tunnel.ts, a plain HTTP request to egress-http.ts. Past the head, bytes pass as
// bytes both ways, counted, with no HTTP parser on a body. The policy is read per connection, so a
// reload applies to running sandboxes at once.
import type { Duplex } from 'node:stream';
import type { EgressPolicy } from '../../../shared/types/policy.js';
import { answerAndClose, rawResponse, type EgressMeter, type EgressRecorder } from './connection-record.js';
import type { Resolver } from './egress-decision.js';
import type { EgressAsker } from './egress-ask.js';
import { forwardPlain } from './egress-http.js';
import { openTunnel, type TunnelContext } from './egress-tunnel.js';
import { MAX_HEAD_BYTES, parseHead, readHead } from './http-head.js';
import { dialHere, type Dial } from './sandbox-dialer.js';

export interface EgressProxyOptions {
  /** The egress section as it is now (read for each connection). */
  policy: () => EgressPolicy;
  record: EgressRecorder;
  ask: EgressAsker;
  /** The run behind a connection from this sandbox, and its budget (null: nobody's). */
  meter: (sandboxId: string) => EgressMeter | null;
  /** Instead of DNS (specs). */
  resolve?: Resolver;
  /** Host path of the runner binary, whose egress-pump carries large transfers (egress-carry.ts); null or absent: Node carries all. */
  pump?: string | null;
  /** The sandbox's first process as this process knows it now (its dialer's), which its pumps end with; absent or null: not known. */
  sandboxPid?: (sandboxId: string) => number | null;
  /** How this sandbox's connections to destinations are made (its dialer: sandbox-dialer.ts); absent: from this process. */
  dial?: (sandboxId: string) => Dial;
}

export class EgressProxy {
  private readonly open = new Set<Duplex>();
  private closed = false;

  constructor(private readonly options: EgressProxyOptions) {}

  /** Serves one connection from inside the sandbox. */
  handle(stream: Duplex, sandboxId: string): void {
    stream.on('error', () => undefined);
    if (this.closed) return void stream.destroy();
    this.open.add(stream);
    stream.once('close', () => this.open.delete(stream));
    this.serve(stream, sandboxId).catch(() => stream.destroy());
  }

  private async serve(stream: Duplex, sandboxId: string): Promise<void> {
    const head = await readHead(stream);
    const request = head.ok ? parseHead(head.text) : null;
    if (!head.ok || !request) {
      const why = head.ok ? 'not an HTTP proxy request' : `${head.why} (a request's head may have ${MAX_HEAD_BYTES / 1024} KiB at most)`;
      return answerAndClose(stream, rawResponse(400, `warden egress: ${why}\n`));
    }
    const meter = this.options.meter(sandboxId);
    const ctx: TunnelContext = {
      policy: this.options.policy(),
      ask: this.options.ask,
      resolve: this.options.resolve,
      sandboxId,
      record: this.options.record,
      meter,
      // A bounded run's bytes stay where each chunk is counted before it passes: the pump's deep buffers would carry past the budget.
      pump:
        meter?.bounded || !this.options.pump
          ? null
          : { path: this.options.pump, sandboxPid: () => this.options.sandboxPid?.(sandboxId) ?? null },
      dial: this.options.dial?.(sandboxId) ?? dialHere,
    };
    if (request.start[0] === 'CONNECT') await openTunnel(ctx, request.start[1], stream, head.rest);
    else await forwardPlain(ctx, request, stream, head.rest);
  }

  close(): void {
    this.closed = true;
    for (const stream of this.open) stream.destroy();
    this.open.clear();
  }
}
