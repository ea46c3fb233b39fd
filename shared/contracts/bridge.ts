// What the renderer needs of its host, whichever door it runs behind: the Electron preload exposes
// this as window.warden; the web shell's socket client implements the same thing. Types only, so
// the preload can import it without pulling anything into its bundle.
import type { EventMessage } from './events.js';
import type { UiMethodName, UiMethodRequest, UiMethodResponse } from './methods.js';
import type { Envelope } from '../errors.js';

/** The link to the door itself (the WebSocket, or always open over IPC), apart from Podman's status. */
export type LinkState = 'connecting' | 'open' | 'closed' | 'unauthorized';

export interface WardenBridge {
  readonly kind: 'electron' | 'web';
  /** Follows the link's state, starting with the current one; returns the stop. */
  onLink(fn: (state: LinkState) => void): () => void;
  /** One call of the shared contract; never rejects for a Warden error, which comes as the envelope's error. */
  invoke<M extends UiMethodName>(method: M, params: UiMethodRequest<M>): Promise<Envelope<UiMethodResponse<M>>>;
  /** Every pushed event; returns the stop. */
  subscribe(fn: (message: EventMessage) => void): () => void;
  /** Tells the door the page is listening, so queued events flow. */
  ready(): void;
}
