// What `warden serve` builds its HTTP API and the web shell on: the opened Warden's engine,
// gateway and ledger reader (open-warden.ts), its tokens and its bounds for slow clients. One type
// for both, so the agent API and the web shell cannot drift apart.
import type { Warden } from '../engine/open-warden.js';
import type { StreamMeter } from './stream-meter.js';
import type { TokenStore } from './tokens.js';

export interface ServerDeps extends Pick<Warden, 'home' | 'engine' | 'gateway' | 'ledgerReader'> {
  tokens: TokenStore;
  /** Bytes queued to slow clients, and the bounds that hold them (one per server). */
  streams?: StreamMeter;
}
