// Which agent verbs act inside a sandbox (run a command, touch its files), as against verbs on the
// sandbox itself (inspect, stop, destroy …). Written once because two gates refuse exactly these:
// a sandbox that failed its attestation (attestation-gate.ts) and a paused one (lifecycle-verbs.ts).
import type { ToolName } from '../../../shared/types/run.js';

export const INSIDE_TOOLS: ReadonlySet<ToolName> = new Set<ToolName>([
  'exec',
  'file.read',
  'file.write',
  'file.list',
  'file.mkdir',
  'file.remove',
  'file.move',
]);
