// A revoked token ends what its holder has in flight, not only its next request: every connection
// that made an authenticated request is tracked by token until its answer is over, and a revocation
// (in this process, or `warden token revoke` from another) closes that token's connections. An exec
// stream's command is then cancelled as for a client that hangs up (recorded as "tokenRevoked"); /v1/live and run followers end.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TokenStore } from './tokens.js';

/** Sockets closed for a revocation, so a stream they carried can say why it ended. */
const cut = new WeakSet<Socket>();

/** Why a stream's client went away: its token was revoked, or it hung up. */
export function goneReason(socket: Socket | null): 'tokenRevoked' | 'clientGone' {
  return socket && cut.has(socket) ? 'tokenRevoked' : 'clientGone';
}

export class RevokedConnections {
  private readonly byToken = new Map<string, Set<Socket>>();
  private readonly stop: () => void;

  constructor(tokens: TokenStore) {
    const onRevoked = (ids: string[]) => {
      for (const id of ids)
        for (const socket of this.byToken.get(id) ?? []) {
          cut.add(socket);
          socket.destroy();
        }
    };
    tokens.on('revoked', onRevoked);
    const unwatch = tokens.watch();
    this.stop = () => {
      tokens.off('revoked', onRevoked);
      unwatch();
    };
  }

  /** Holds the socket under the token until the answer finishes or the socket closes. */
  track(tokenId: string, socket: Socket, answer: ServerResponse): void {
    let set = this.byToken.get(tokenId);
    if (!set) this.byToken.set(tokenId, (set = new Set()));
    set.add(socket);
    const untrack = () => {
      // A keep-alive socket carries many requests: leave no listener behind from this one.
      socket.off('close', untrack);
      answer.off('finish', untrack);
      set.delete(socket);
      if (set.size === 0 && this.byToken.get(tokenId) === set) this.byToken.delete(tokenId);
    };
    socket.once('close', untrack);
    answer.once('finish', untrack);
  }

  close(): void {
    this.stop();
  }
}
