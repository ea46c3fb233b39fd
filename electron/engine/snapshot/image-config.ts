// A snapshot is committed from a sandbox whose entrypoint is Warden's (its runner's keep-alive, or a
// shell loop: container-spec.ts), which an image must not carry: `podman run` of a snapshot by hand
// would start a runner that is only there when Warden mounts it. The commit is told to put back the
// entrypoint and command of the image the sandbox was made from. Warden's own restores set the
// entrypoint again either way.
import type { PodmanConnection } from '../podman/connection.js';

interface ImageConfig {
  Config?: { Entrypoint?: string[] | null; Cmd?: string[] | null };
}

/** `changes` for the libpod commit: the base image's ENTRYPOINT and CMD, in the JSON form (`[]` for none). */
export async function baseImageChanges(conn: PodmanConnection, imageId: string): Promise<string[]> {
  const base = await conn.libpod<ImageConfig>('GET', `/images/${imageId}/json`, undefined, `image ${imageId.slice(0, 12)}`);
  return [`ENTRYPOINT ${JSON.stringify(base.Config?.Entrypoint ?? [])}`, `CMD ${JSON.stringify(base.Config?.Cmd ?? [])}`];
}
