// What snapshots are called: the Podman repository their images are committed to (by container id,
// so two sandboxes that held one name never share an image name) and the tag one gets when none is
// given. Apart from snapshots.ts so the create policy can tell a snapshot's image without loading it.

/** The repository of a sandbox's snapshot images: by container id, since image names must be lower case. */
const SNAPSHOT_REPO = 'localhost/warden-snapshot/';
export const imageRepo = (sandboxId: string) => `${SNAPSHOT_REPO}${sandboxId.slice(0, 12)}`;
/** A snapshot's image holds someone's files: only a reset or fork of a snapshot one may use starts from it. */
export const isSnapshotImage = (image: string) => image.startsWith(SNAPSHOT_REPO);

/** A tag when none is given: the time, to the second (a second snapshot within it needs a tag). */
export function defaultTag(now: Date): string {
  return `s-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`;
}
