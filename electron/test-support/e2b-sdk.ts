// What the specs of the real `e2b` SDK share: the SDK finds its server and token in three environment
// variables, so a spec points them at its test server as one agent and puts them back afterwards;
// and most of their attacks want the error an SDK call ends with.
import { E2B_PREFIX } from '../../shared/contracts/e2b-routes.js';
import type { TestServer } from './test-server.js';

const VARIABLES = ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY'] as const;

/** Keeps the SDK's variables as they are now; the answer puts them back (unset where they were unset). */
export function saveE2bEnv(): () => void {
  const saved = VARIABLES.map((name) => [name, process.env[name]] as const);
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

/** Points the SDK at the test server's E2B routes with a new token for `agent`; the answer puts the variables back. */
export function pointE2bAt(ts: TestServer, agent: string): () => void {
  const restore = saveE2bEnv();
  process.env.E2B_API_URL = `${ts.server.url}${E2B_PREFIX}`;
  process.env.E2B_SANDBOX_URL = `${ts.server.url}${E2B_PREFIX}`;
  process.env.E2B_API_KEY = ts.server.tokens.create(agent).token;
  return restore;
}

/** The error a promise ends with (the spec fails if it does not end with one). */
export async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the call to fail');
}
