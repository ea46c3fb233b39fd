/** Every sandbox a spec creates carries this label, so leftovers of a crashed run can be swept. */
export const TEST_LABEL_KEY = 'warden-test.run';
export const TEST_LABEL = TEST_LABEL_KEY;
