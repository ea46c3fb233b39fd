// Integration specs share one Podman service: found, or started here for the whole run.
// Sandboxes left by a crashed earlier run (label warden-test.run, over an hour old) are swept first;
// younger ones may belong to a suite running beside this one.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodmanConnection } from '../engine/podman/connection.js';
import { MANAGED_FILTER } from '../engine/podman/labels.js';
import { DiskLimits } from '../engine/podman/disk-limit.js';
import { TEST_LABEL } from './test-label.js';

const STALE_AFTER_MS = 3600_000;
let connection: PodmanConnection | null = null;
let home: string | null = null;

export async function setup(): Promise<void> {
  home = mkdtempSync(join(tmpdir(), 'warden-it-'));
  connection = await PodmanConnection.open({ home, startService: true, detachedService: false });
  // Workers inherit the environment: they all use this socket.
  process.env.CONTAINER_HOST = `unix://${connection.socketPath}`;
  const filters = encodeURIComponent(JSON.stringify({ label: [MANAGED_FILTER, TEST_LABEL] }));
  const found = await connection.libpod<Array<{ Id: string; Created: string | number }>>(
    'GET',
    `/containers/json?all=true&filters=${filters}`,
    undefined,
    'sweep',
  );
  const hourAgo = Date.now() - STALE_AFTER_MS;
  const stale = found.filter((c) => (typeof c.Created === 'number' ? c.Created * 1000 : Date.parse(c.Created)) < hourAgo);
  for (const c of stale) await connection.libpod('DELETE', `/containers/${c.Id}?force=true&timeout=0`, undefined, 'sweep', [200, 204, 404]);
  // Their disks stay mounted in the crashed run's temp home: release those whose container is gone
  // (a suite running beside this one keeps its own, whose layers still point at them).
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith('warden-'))) {
    if (existsSync(join(tmpdir(), name, 'disks'))) await new DiskLimits(join(tmpdir(), name)).sweep();
  }
}

export async function teardown(): Promise<void> {
  connection?.close();
  if (home) rmSync(home, { recursive: true, force: true });
}
