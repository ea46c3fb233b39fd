// What a refused sandbox create says. Podman answers a create it cannot do with its own words (an
// image not known, no subordinate ids, a name in use, and silently another runtime for one it does
// not know); sandboxes.ts hands each over as a Warden error with what to do about it.
import { WardenError } from '../../../shared/errors.js';
import type { RuntimeName } from '../../../shared/types/sandbox.js';
import { isNameConflict, nameTaken } from './container-names.js';
import { RUNTIME_INSTALL_HINTS } from './runtimes.js';

const NO_SUBORDINATE_IDS = new WardenError(
  'E_ENGINE',
  'Podman has no subordinate ids to give this sandbox its own user namespace',
  'add the range Podman hands out with `echo containers:2147483647:2147483648 | tee -a /etc/subuid /etc/subgid` (or run `npm run setup`)',
);

function imageMissing(image: string, defaultImage: string): WardenError {
  return new WardenError(
    'E_IMAGE_MISSING',
    `image ${image} is not present in the local Podman store`,
    image === defaultImage
      ? 'build it offline with `npm run setup` (resources/image/build.sh)'
      : `pull or build it first (\`podman pull ${image}\`), or leave --image out to use ${defaultImage}`,
  );
}

/** The error to throw for Podman's refusal of a create: one of ours where Podman's words are known, else its own. */
export function createRefusal(err: unknown, create: { image: string; defaultImage: string; name: string }): unknown {
  const message = (err as Error).message;
  if (/image not known|no such image/i.test(message)) return imageMissing(create.image, create.defaultImage);
  if (/enough available IDs|no subuid ranges/i.test(message)) return NO_SUBORDINATE_IDS;
  if (isNameConflict(err)) return nameTaken(create.name); // Podman's message names the other container's id
  return err;
}

/** libpod falls back to its default runtime for a name it does not know: a create that got another runtime is refused. */
export function runtimeSwapped(asked: RuntimeName, used: string): WardenError {
  return new WardenError('E_RUNTIME_UNAVAILABLE', `asked for the ${asked} runtime but Podman used ${used}`, RUNTIME_INSTALL_HINTS[asked]);
}
