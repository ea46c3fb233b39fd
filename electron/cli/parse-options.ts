// Turns CLI option text into typed values, with errors that say which option and what is expected.
import { WardenError } from '../../shared/errors.js';

export function parseNumberOption(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) {
    throw new WardenError('E_BAD_INPUT', `--${name} "${text}" is not a number`, `give --${name} a number, e.g. --${name} 1`);
  }
  return value;
}

export function parseIntegerOption(name: string, text: string | undefined): number | undefined {
  const value = parseNumberOption(name, text);
  if (value !== undefined && !Number.isInteger(value)) {
    throw new WardenError('E_BAD_INPUT', `--${name} ${text} must be a whole number`);
  }
  return value;
}

/** Collects repeated `--env KEY=VALUE` style options into a record. */
export function collectPairs(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function pairsToRecord(name: string, pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs?.length) return undefined;
  const record: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new WardenError('E_BAD_INPUT', `--${name} "${pair}" is not KEY=VALUE`);
    record[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return record;
}
