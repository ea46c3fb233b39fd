// The create dialog's fields as text, turned into a spec and checked with the same zod schema the
// engine's doors use, so a mistake is named next to its field before anything is sent.
import { SandboxSpecSchema, type NetworkMode, type RuntimeName, type SandboxSpecInput } from '../../../../shared/types/sandbox.js';

export interface SpecForm {
  name: string;
  image: string;
  memory: string;
  cpus: string;
  pids: string;
  network: NetworkMode;
  runtime: '' | RuntimeName;
  workspace: string;
  env: string;
  labels: string;
  ttl: string;
  readOnlyRoot: boolean;
  tmpSize: string;
  disk: string;
}

export const EMPTY_FORM: SpecForm = {
  name: '',
  image: '',
  memory: '512m',
  cpus: '1',
  pids: '256',
  network: 'none',
  runtime: '',
  workspace: '',
  env: '',
  labels: '',
  ttl: '',
  readOnlyRoot: true,
  tmpSize: '64m',
  disk: '4g',
};

export type FieldErrors = Partial<Record<keyof SpecForm, string>>;

/** KEY=VALUE per line; blank lines and # comments are skipped. */
export function parsePairs(text: string, field: 'env' | 'labels', errors: FieldErrors): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) {
      errors[field] = `line ${i + 1}: write KEY=VALUE`;
      return undefined;
    }
    out[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return Object.keys(out).length ? out : undefined;
}

/** "90", "90s", "15m", "2h", "1d" → seconds */
export function parseTtl(text: string): number | null {
  const m = /^\s*(\d+)\s*([smhd]?)\s*$/i.exec(text);
  if (!m) return null;
  const factor = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2]!.toLowerCase() as '' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * factor;
}

const FIELD_OF: Record<string, keyof SpecForm> = { ttlSeconds: 'ttl' };

export function formToSpec(form: SpecForm): { spec: SandboxSpecInput | null; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const spec: SandboxSpecInput = {};
  if (form.name.trim()) spec.name = form.name.trim();
  if (form.image.trim()) spec.image = form.image.trim();
  if (form.memory.trim()) spec.memory = form.memory.trim();
  if (form.cpus.trim()) {
    const cpus = Number(form.cpus);
    if (!Number.isFinite(cpus)) errors.cpus = 'a number of cores, e.g. 0.5 or 2';
    else spec.cpus = cpus;
  }
  if (form.pids.trim()) {
    const pids = Number(form.pids);
    if (!Number.isInteger(pids)) errors.pids = 'a whole number of processes';
    else spec.pids = pids;
  }
  spec.network = form.network;
  if (form.runtime) spec.runtime = form.runtime;
  if (form.workspace.trim()) spec.workspace = form.workspace.trim();
  const env = parsePairs(form.env, 'env', errors);
  if (env) spec.env = env;
  const labels = parsePairs(form.labels, 'labels', errors);
  if (labels) spec.labels = labels;
  if (form.ttl.trim()) {
    const ttl = parseTtl(form.ttl);
    if (ttl === null) errors.ttl = 'a duration like 30m, 2h or 1d';
    else spec.ttlSeconds = ttl;
  }
  spec.readOnlyRoot = form.readOnlyRoot;
  if (form.tmpSize.trim()) spec.tmpSize = form.tmpSize.trim();
  if (form.disk.trim()) spec.disk = form.disk.trim();

  const parsed = SandboxSpecSchema.safeParse(spec);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = String(issue.path[0] ?? 'name');
      const field = FIELD_OF[key] ?? (key as keyof SpecForm);
      errors[field] ??= issue.message;
    }
  }
  return { spec: Object.keys(errors).length ? null : spec, errors };
}
