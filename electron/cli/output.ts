import { toErrorInfo, type ErrorInfo } from '../../shared/errors.js';

export interface JsonOption {
  json?: boolean;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The --json contract, or text for a person. */
export function printResult<T>(json: boolean, value: T, text: (value: T) => string): void {
  if (json) printJson(value);
  else process.stdout.write(text(value));
}

/** One clear line (and a hint) on stderr; never a stack trace. */
export function printError(info: ErrorInfo, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ error: info }, null, 2)}\n`);
    return;
  }
  process.stderr.write(`warden: ${info.message}\n`);
  if (info.hint) process.stderr.write(`  hint: ${info.hint}\n`);
}

/**
 * Runs a command body and turns any failure into a one-line message and an exit code.
 * The body returns the exit code it wants (default 0).
 */
export async function runCommand(json: boolean, body: () => Promise<number | void>): Promise<void> {
  try {
    const code = await body();
    process.exitCode = code ?? 0;
  } catch (err) {
    const info = toErrorInfo(err);
    if (info.code === 'E_INTERNAL' && process.env.WARDEN_DEBUG) console.error(err);
    printError(info, json);
    process.exitCode = exitCodeFor(info);
  }
}

function exitCodeFor(info: ErrorInfo): number {
  switch (info.code) {
    case 'E_BAD_INPUT':
      return 2;
    case 'E_ENGINE_UNREACHABLE':
      return 3;
    case 'E_NOT_FOUND':
      return 4;
    default:
      return 1;
  }
}
