// An agent's create is held to the policy's image list, and never starts from a snapshot's image,
// however wide that list is: a snapshot's image holds another sandbox's files (red-team finding).
import { describe, expect, it } from 'vitest';
import { policyWith } from '../../test-support/test-server.js';
import { createVerdict } from './create-policy.js';
import { GatewayDenial } from './denial.js';

const agent = { agent: 'eve', runKey: null };
const DEFAULT_IMAGE = 'localhost/warden-default:1';

function verdictFor(image: string, images: string[]): string {
  const policy = policyWith((p) => {
    p.create.images = images;
  });
  try {
    return createVerdict(policy, DEFAULT_IMAGE, { image }, agent, 0).verdict.action;
  } catch (err) {
    if (err instanceof GatewayDenial) return `denied: ${err.message}`;
    throw err;
  }
}

describe('create policy: images', () => {
  it('lets an agent use an image the policy lists, and refuses one it does not', () => {
    expect(verdictFor('docker.io/library/alpine:3', ['docker.io/library/*'])).toBe('allow');
    expect(verdictFor('quay.io/x/y:1', ['docker.io/library/*'])).toMatch(/^denied: image quay.io\/x\/y:1 is not one agents may use/);
  });

  it("refuses a snapshot's image even when the policy allows every image", () => {
    expect(verdictFor('localhost/warden-snapshot/0123456789ab:before', ['*', 'localhost/*'])).toMatch(
      /^denied: image localhost\/warden-snapshot\/0123456789ab:before is a snapshot's/,
    );
  });
});
