// The one typed method map every door speaks (IPC, WebSocket, CLI in-process). Each method has a
// zod schema for its request, checked at the door, and a response type. Handlers and clients are
// typed from this map, never by hand.
import { z } from 'zod';
import type { ConnectionInfo, DoctorReport } from '../types/engine.js';
import { SandboxRefSchema, SandboxSpecSchema, type SandboxInfo } from '../types/sandbox.js';
import { ExecRequestSchema, type ExecResult } from '../types/exec.js';

const RefRequest = z.object({ ref: SandboxRefSchema }).strict();
const Empty = z.object({}).strict();

export const MethodSchemas = {
  'engine.info': Empty,
  'engine.doctor': z.object({ fresh: z.boolean().optional() }).strict(),
  'sandbox.list': Empty,
  'sandbox.inspect': RefRequest,
  'sandbox.create': SandboxSpecSchema,
  'sandbox.start': RefRequest,
  'sandbox.stop': RefRequest,
  'sandbox.restart': RefRequest,
  'sandbox.pause': RefRequest,
  'sandbox.resume': RefRequest,
  'sandbox.destroy': RefRequest,
  'exec.run': z.object({ ref: SandboxRefSchema, request: ExecRequestSchema }).strict(),
} as const;

export interface ExecRunResponse extends ExecResult {
  /** Output as base64, so binary output survives JSON; capped by request.outputLimitBytes. */
  stdoutBase64: string;
  stderrBase64: string;
}

export interface MethodResponses {
  'engine.info': ConnectionInfo;
  'engine.doctor': DoctorReport;
  'sandbox.list': SandboxInfo[];
  'sandbox.inspect': SandboxInfo;
  'sandbox.create': SandboxInfo;
  'sandbox.start': SandboxInfo;
  'sandbox.stop': SandboxInfo;
  'sandbox.restart': SandboxInfo;
  'sandbox.pause': SandboxInfo;
  'sandbox.resume': SandboxInfo;
  'sandbox.destroy': { id: string; name: string };
  'exec.run': ExecRunResponse;
}

export type MethodName = keyof typeof MethodSchemas;
/** What a client sends (before parsing: sizes may be text). */
export type MethodRequest<M extends MethodName> = z.input<(typeof MethodSchemas)[M]>;
/** What a handler receives (after parsing). */
export type MethodParams<M extends MethodName> = z.output<(typeof MethodSchemas)[M]>;
export type MethodResponse<M extends MethodName> = MethodResponses[M];

export type MethodHandlers = { [M in MethodName]: (params: MethodParams<M>) => Promise<MethodResponse<M>> };

export function isMethodName(name: string): name is MethodName {
  return Object.prototype.hasOwnProperty.call(MethodSchemas, name);
}
