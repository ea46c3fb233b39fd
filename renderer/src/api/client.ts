// The renderer's typed client: calls of the shared contract that resolve to the result or throw the
// envelope's error as a WardenError, and typed event subscriptions. Same for both doors.
import type { EventMap, EventMessage, EventName } from '../../../shared/contracts/events.js';
import type { UiMethodName, UiMethodRequest, UiMethodResponse } from '../../../shared/contracts/methods.js';
import { WardenError, fromErrorInfo } from '../../../shared/errors.js';
import type { LinkState, WardenBridge } from '../../../shared/contracts/bridge.js';

type Listener<E extends EventName> = (payload: EventMap[E]) => void;

export class WardenClient {
  private readonly listeners = new Map<EventName, Set<Listener<EventName>>>();

  constructor(readonly bridge: WardenBridge) {
    bridge.subscribe((message) => this.dispatch(message));
  }

  get kind(): WardenBridge['kind'] {
    return this.bridge.kind;
  }

  async call<M extends UiMethodName>(method: M, params: UiMethodRequest<M>): Promise<UiMethodResponse<M>> {
    let envelope;
    try {
      envelope = await this.bridge.invoke(method, params);
    } catch (err) {
      throw new WardenError('E_INTERNAL', `${method}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if ('error' in envelope) throw fromErrorInfo(envelope.error);
    return envelope.result;
  }

  on<E extends EventName>(event: E, fn: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn as Listener<EventName>);
    return () => void set.delete(fn as Listener<EventName>);
  }

  onLink(fn: (state: LinkState) => void): () => void {
    return this.bridge.onLink(fn);
  }

  private dispatch(message: EventMessage): void {
    for (const fn of this.listeners.get(message.event) ?? []) {
      try {
        (fn as Listener<typeof message.event>)(message.payload);
      } catch (err) {
        console.error(`warden: listener of ${message.event} failed`, err);
      }
    }
  }
}
