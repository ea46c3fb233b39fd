// Pushed events, typed by the shared event map; each subscription returns its stop.
import type { EventMap, EventName } from '../../shared/contracts/events.js';

type Listener<E extends EventName> = (payload: EventMap[E]) => void;

export class EventBus {
  private readonly listeners = new Map<EventName, Set<Listener<EventName>>>();

  on<E extends EventName>(event: E, fn: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn as Listener<EventName>);
    return () => set.delete(fn as Listener<EventName>);
  }

  emit<E extends EventName>(event: E, payload: EventMap[E]): void {
    for (const fn of this.listeners.get(event) ?? []) {
      try {
        (fn as Listener<E>)(payload);
      } catch {
        // one bad subscriber must not stop the others
      }
    }
  }
}
