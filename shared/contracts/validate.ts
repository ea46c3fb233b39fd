import { WardenError } from '../errors.js';
import { isMethodName, MethodSchemas, type MethodName, type MethodParams } from './methods.js';

/** Validates a request at a door; bad input becomes E_BAD_INPUT naming the field and what is wrong. */
export function parseRequest<M extends MethodName>(method: M, body: unknown): MethodParams<M> {
  const result = MethodSchemas[method].safeParse(body ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
    throw new WardenError('E_BAD_INPUT', `${method}: ${where}${issue.message}`);
  }
  return result.data as MethodParams<M>;
}

export function requireMethod(name: string): MethodName {
  if (!isMethodName(name)) throw new WardenError('E_BAD_INPUT', `unknown method ${name}`);
  return name;
}
