// A child process for pool-claim-crash.int.spec: opens Warden on WARDEN_HOME with a pool of one,
// creates a sandbox from it, and at the claim step named by WARDEN_TEST_CLAIM_STOP prints
// {step, id} and waits there, so its parent kills it -9 at a known point instead of after a sleep.
import { parseRequest } from '../../shared/contracts/validate.js';
import { PoolConfigSchema } from '../../shared/types/pool.js';
import { openWarden } from '../engine/open-warden.js';
import { openPool } from '../engine/pool/open-pool.js';
import { TEST_LABEL_KEY } from './test-label.js';

const env = process.env;
const labels = { [TEST_LABEL_KEY]: env.WARDEN_TEST_RUN ?? 'none' };
const warden = await openWarden(env.WARDEN_HOME!, { gateway: false });
const pool = await openPool(warden.engine, warden, {
  config: PoolConfigSchema.parse({ size: 1, labels }),
  labels,
  claimStep: async (step, id) => {
    if (step !== env.WARDEN_TEST_CLAIM_STOP) return;
    process.stdout.write(`${JSON.stringify({ step, id })}\n`);
    setInterval(() => undefined, 1 << 30); // held here until killed
    await new Promise<never>(() => undefined);
  },
});
if (!pool) throw new Error('no pool');
await pool.settled();
await warden.engine['sandbox.create'](parseRequest('sandbox.create', { name: env.WARDEN_TEST_NAME, labels }));
throw new Error(`the claim never reached ${env.WARDEN_TEST_CLAIM_STOP}`);
