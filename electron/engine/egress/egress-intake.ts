// What happens to a connection on a sandbox's egress socket before the proxy sees it: its first byte
// says whether it brings the program's own socket (fd-intake.ts), and a sandbox may hold at most
// MAX_OPEN_PER_SANDBOX connections at once. A relay that hands its connections over keeps none
// itself, so without this bound one agent opening connections in a loop would fill this process's
// descriptor table and starve every other sandbox (and the gate itself). Past it, a connection
// gets a one-line 503 that says so, like every other refusal on this path.
import type { Socket } from 'node:net';
import { rawResponse } from './connection-record.js';
import { takeConnection } from './fd-intake.js';

/** Connections one sandbox may have open through Warden at once (the relay of a gVisor sandbox carries at most 512 itself). */
export const MAX_OPEN_PER_SANDBOX = 256;

export interface IntakeOptions {
  /** The sandbox's relay hands connections over (--pass-fd): each first byte is read for a descriptor. */
  descriptors: boolean;
  max?: number;
}

export function intakeFor(serve: (stream: Socket) => void, onBad: (why: string) => void, o: IntakeOptions): (unix: Socket) => void {
  const max = o.max ?? MAX_OPEN_PER_SANDBOX;
  // Counted from accept to close, the wait for a first byte included: silent connections are bounded too.
  let open = 0;
  const refuse = (stream: Socket) => {
    stream.on('error', () => undefined);
    // Closed once said, whatever the sandbox does next: a refused connection must not hold a descriptor here.
    stream.end(
      rawResponse(503, `warden egress: this sandbox has ${max} connections open, the most it may; close some and try again\n`),
      () => stream.destroy(),
    );
  };
  return (unix: Socket) => {
    const full = open >= max;
    open++;
    const taken = o.descriptors ? takeConnection(unix, onBad) : Promise.resolve(unix);
    void taken.then((stream) => {
      if (!stream) return void open--;
      stream.once('close', () => open--);
      // Said on the program's own socket where it came (the Unix connection only carried it here).
      if (full) refuse(stream);
      else serve(stream);
    });
  };
}
