// Engine events are reported for this Warden home's sandboxes (and legacy ones without a home
// label), never for another home's sharing the same Podman.
import { describe, expect, it } from 'vitest';
import { toEngineEvent, type LibpodEvent } from './events.js';

const event = (labels: Record<string, string>): LibpodEvent =>
  ({
    Type: 'container',
    Action: 'start',
    Actor: { ID: 'f'.repeat(64), Attributes: { name: 'box', 'warden.managed': 'true', ...labels } },
    time: 1_700_000_000,
  }) as LibpodEvent;

describe('toEngineEvent', () => {
  it("keeps this home's and legacy sandboxes' events, drops another home's", () => {
    expect(toEngineEvent(event({ 'warden.home': 'a'.repeat(32) }), 'a'.repeat(32))).toMatchObject({ kind: 'start', name: 'box' });
    expect(toEngineEvent(event({}), 'a'.repeat(32))).toMatchObject({ kind: 'start' });
    expect(toEngineEvent(event({ 'warden.home': 'b'.repeat(32) }), 'a'.repeat(32))).toBeNull();
  });
});
