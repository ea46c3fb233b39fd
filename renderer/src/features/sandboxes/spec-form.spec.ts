// The create dialog's disk field: sent as the spec's disk, a bad size named next to the field.
import { describe, expect, it } from 'vitest';
import { EMPTY_FORM, formToSpec } from './spec-form.js';

describe('create dialog disk field', () => {
  it('sends the disk limit, 4g unless changed', () => {
    expect(formToSpec(EMPTY_FORM).spec?.disk).toBe('4g');
    expect(formToSpec({ ...EMPTY_FORM, disk: '256m' }).spec?.disk).toBe('256m');
  });

  it('names a bad size next to the field', () => {
    const { spec, errors } = formToSpec({ ...EMPTY_FORM, disk: 'lots' });
    expect(spec).toBeNull();
    expect(errors.disk).toMatch(/disk "lots" is not a size/);
  });
});
