// A request's shape decides whether a pooled sandbox may serve it: same shape, same container.
import { describe, expect, it } from 'vitest';
import { SandboxSpecSchema } from '../../../shared/types/sandbox.js';
import { PoolConfigSchema } from '../../../shared/types/pool.js';
import { poolableShape, shapeKey, shapeOf, specOf } from './shape.js';

const defaults = { image: 'localhost/warden-sandbox:1', runtime: 'runc' as const };
const spec = (s: Record<string, unknown>) => SandboxSpecSchema.parse(s);

describe('pool shapes', () => {
  it('gives a default create and the default pool shape one key, whatever name, labels or TTL', () => {
    const pool = shapeOf(PoolConfigSchema.parse({}).shapes[0]!, defaults)!;
    const asked = poolableShape(spec({ name: 'mine', labels: { team: 'a' }, ttlSeconds: 60 }), defaults)!;
    expect(shapeKey(asked)).toBe(shapeKey(pool));
    expect(shapeKey(poolableShape(spec({ memory: '512m', cpus: 1, network: 'none', runtime: 'runc' }), defaults)!)).toBe(shapeKey(pool));
  });

  it('tells shapes apart by anything that changes the container', () => {
    const base = shapeKey(shapeOf({}, defaults)!);
    for (const extra of [
      { memory: '256m' },
      { cpus: 2 },
      { pids: 512 },
      { network: 'nat' },
      { readOnlyRoot: true },
      { disk: '1g' },
      { image: 'debian:12' },
      { runtime: 'runsc' },
    ]) {
      expect(shapeKey(poolableShape(spec(extra), defaults)!), JSON.stringify(extra)).not.toBe(base);
    }
  });

  it('sends a host workspace, env at create and reserved labels to the cold path', () => {
    expect(poolableShape(spec({ workspace: '/tmp' }), defaults)).toBeNull();
    expect(poolableShape(spec({ env: { A: '1' } }), defaults)).toBeNull();
    expect(poolableShape(spec({ labels: { 'warden.pool': 'x' } }), defaults)).toBeNull();
    expect(poolableShape(spec({}), { ...defaults, runtime: null })).toBeNull();
  });

  it('creates pooled sandboxes with a spec of the same shape', () => {
    const shape = poolableShape(spec({ readOnlyRoot: true, memory: '128m' }), defaults)!;
    expect(shapeOf(specOf(shape), defaults)).toEqual(shape);
  });

  it('reads the pool config with defaults, and sizes as text', () => {
    expect(PoolConfigSchema.parse({})).toMatchObject({ size: 2, maxMemory: 2 * 1024 ** 3, shapes: [{}] });
    expect(PoolConfigSchema.parse({ size: 0, maxMemory: '1g' })).toMatchObject({ size: 0, maxMemory: 1024 ** 3 });
    expect(() => PoolConfigSchema.parse({ shapes: [{ workspace: '/x' }] })).toThrow();
  });
});
