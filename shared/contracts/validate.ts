// Validates an engine method's request at a door (or the CLI in-process) against the method map's schema.
import { parseWith } from './parse.js';
import { UiMethods, type MethodName, type MethodParams } from './methods.js';

/** Validates a request at a door; bad input becomes E_BAD_INPUT naming the field and what is wrong. */
export function parseRequest<M extends MethodName>(method: M, body: unknown): MethodParams<M> {
  return parseWith(UiMethods[method].params, body, method) as MethodParams<M>;
}
