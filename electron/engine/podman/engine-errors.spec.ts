// What a person is told when Podman does not answer: start it, unless it is Warden's own service,
// which Warden starts again by itself (then: where its log is).
import { describe, expect, it } from 'vitest';
import { mapEngineError, unreachable } from './engine-errors.js';

describe('unreachable', () => {
  it("tells a person to start someone else's Podman, and points at the log of Warden's own", () => {
    expect(unreachable('/run/podman/podman.sock').hint).toMatch(/podman system service --time=0/);
    const own = unreachable('/h/run/podman.sock', '/h/run/podman-service.log');
    expect(own.message).toBe('the Podman engine is not answering at /h/run/podman.sock');
    expect(own.hint).toMatch(/Warden started this Podman service and is starting it again/);
    expect(own.hint).toContain('/h/run/podman-service.log');
    expect(own.hint).not.toMatch(/podman system service --time=0/);
  });

  it('keeps the owner when a failed call is mapped', () => {
    const err = mapEngineError(
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'x',
      '/h/run/podman.sock',
      '/h/log',
    );
    expect(err).toMatchObject({ code: 'E_ENGINE_UNREACHABLE', hint: expect.stringContaining('/h/log') });
  });
});
