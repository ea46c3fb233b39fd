// The one way a door (or a loader) turns a zod failure into Warden's error: E_BAD_INPUT naming what
// was parsed, the field, and what is wrong with it, so every door reports bad input the same way.
import type { z } from 'zod';
import { WardenError } from '../errors.js';

/** What the first zod issue says, as "field.path: message" (no path for the value as a whole). */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  return issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

/** Parses `value` (undefined and null count as `{}`), or throws E_BAD_INPUT "what: field: message". */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what: string, hint?: string): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw new WardenError('E_BAD_INPUT', `${what}: ${describeIssue(result.error)}`, hint);
  return result.data;
}
