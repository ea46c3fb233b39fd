import { describe, expect, it } from 'vitest';
import { WardenError } from '../../../shared/errors.js';
import { busyMountOf, isBusyRemoval } from './container-removal.js';

// Podman 4.3's own words when its cleanup still holds the shm mount (seen in CI and here).
const PODMAN_BUSY =
  'sandbox 5b68: removing container 5b68 root filesystem: 1 error occurred:\n\t* unlinkat /var/lib/containers/storage/overlay-containers/5b68/userdata/shm: device or resource busy\n';

describe('container removal on Podman 4.3', () => {
  it('knows the busy-shm race and the mount to detach', () => {
    expect(isBusyRemoval(new WardenError('E_ENGINE', PODMAN_BUSY))).toBe(true);
    expect(isBusyRemoval(new WardenError('E_ENGINE', 'no such container'))).toBe(false);
    expect(isBusyRemoval(new Error(PODMAN_BUSY))).toBe(false);
    expect(busyMountOf(PODMAN_BUSY)).toBe('/var/lib/containers/storage/overlay-containers/5b68/userdata/shm');
    expect(busyMountOf('device or resource busy')).toBeNull();
    const unmounting =
      'cleaning up container 8997: unmounting container 8997 storage: unmounting container 8997 SHM mount /var/lib/containers/storage/overlay-containers/8997/userdata/shm: device or resource busy';
    expect(busyMountOf(unmounting)).toBe('/var/lib/containers/storage/overlay-containers/8997/userdata/shm');
  });
});
