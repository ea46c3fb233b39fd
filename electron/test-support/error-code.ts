// What a call came to, as one word a spec can compare: 'ok', or the WardenError code it failed with
// (anything else thrown, as text, so an unexpected error shows in the assertion).
import { WardenError } from '../../shared/errors.js';

export async function errorCodeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof WardenError ? err.code : String(err);
  }
}
