// The one typed method map every door speaks (IPC, WebSocket, CLI in-process). Each method has a
// zod schema for its request, checked at the door, and a response type. Handlers and clients are
// typed from this map, never by hand.
import { z } from 'zod';
import type { ConnectionInfo, DoctorReport } from '../types/engine.js';
import { SandboxRefSchema, SandboxSpecSchema, type SandboxInfo } from '../types/sandbox.js';
import { ExecRequestSchema, TerminalSizeSchema, type ExecResult } from '../types/exec.js';
import { AttestRequestSchema, type Attestation } from '../types/attestation.js';
import { ApprovalDecideSchema, RunQuerySchema, type ApprovalInfo, type RunDetail, type RunInfo } from '../types/run.js';
import {
  LedgerBrowseSchema,
  LedgerExportRequestSchema,
  LedgerVerifyRequestSchema,
  type LedgerExportResult,
  type LedgerPage,
  type LedgerSummary,
  type LedgerVerifyOutcome,
} from '../types/ledger.js';

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
  /** Checks from inside that each promise holds; recorded as sandbox.attested. */
  'sandbox.attest': AttestRequestSchema,
  /** The sandbox's latest attestation in this process, or null. */
  'sandbox.attestation': RefRequest,
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
  'sandbox.attest': Attestation;
  'sandbox.attestation': Attestation | null;
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

// --- UI sessions (Electron IPC and the web shell's WebSocket) ---------------------------------------
// Streams a UI holds open (terminals, stats) live per connection in the door, not in the engine, so
// they are a second map; a UI speaks both. Their output comes back as events (terminal.data …).
const StreamId = z.string().min(1).max(64);

export const SessionMethodSchemas = {
  'terminal.open': z.object({ ref: SandboxRefSchema, size: TerminalSizeSchema }).strict(),
  /** Keystrokes and pastes; a paste of a few hundred KiB is one call. */
  'terminal.input': z.object({ id: StreamId, data: z.string().max(1024 * 1024) }).strict(),
  'terminal.resize': z.object({ id: StreamId, size: TerminalSizeSchema }).strict(),
  'terminal.close': z.object({ id: StreamId }).strict(),
  /** The sandboxes whose stats this connection wants (replaces the previous set; [] stops them all). */
  'stats.watch': z.object({ ids: z.array(SandboxRefSchema).max(1000) }).strict(),
} as const;

export interface SessionMethodResponses {
  'terminal.open': { id: string; sandboxId: string };
  'terminal.input': null;
  'terminal.resize': null;
  'terminal.close': null;
  'stats.watch': { watching: number };
}

/** IPC channels between the Electron preload and main. */
export const IPC_CHANNELS = { invoke: 'warden:invoke', event: 'warden:event', ready: 'warden:ready' } as const;

// --- gateway: runs, tool calls and approvals (agents' work, for the UI and `warden run`) ---
export const GatewayMethodSchemas = {
  'run.list': RunQuerySchema,
  'run.get': z.object({ id: z.string().min(1).max(64) }).strict(),
  'approval.list': Empty,
  'approval.decide': ApprovalDecideSchema,
} as const;

export interface GatewayMethodResponses {
  'run.list': RunInfo[];
  'run.get': RunDetail;
  'approval.list': ApprovalInfo[];
  'approval.decide': ApprovalInfo;
}

export type GatewayMethodName = keyof typeof GatewayMethodSchemas;
export type GatewayMethodParams<M extends GatewayMethodName> = z.output<(typeof GatewayMethodSchemas)[M]>;
export type GatewayMethodHandlers = { [M in GatewayMethodName]: (params: GatewayMethodParams<M>) => Promise<GatewayMethodResponses[M]> };

// --- ledger: the ledger view (browse, verify with progress events, export) ---
export const LedgerMethodSchemas = {
  'ledger.summary': Empty,
  'ledger.entries': LedgerBrowseSchema,
  /** Runs a full verification; `ledger.verify.progress` events carry its jobId meanwhile. */
  'ledger.verify': LedgerVerifyRequestSchema,
  'ledger.export': LedgerExportRequestSchema,
} as const;

export interface LedgerMethodResponses {
  'ledger.summary': LedgerSummary;
  'ledger.entries': LedgerPage;
  'ledger.verify': LedgerVerifyOutcome;
  'ledger.export': LedgerExportResult;
}

export type LedgerMethodName = keyof typeof LedgerMethodSchemas;
export type LedgerMethodParams<M extends LedgerMethodName> = z.output<(typeof LedgerMethodSchemas)[M]>;
export type LedgerMethodHandlers = { [M in LedgerMethodName]: (params: LedgerMethodParams<M>) => Promise<LedgerMethodResponses[M]> };

// --- everything a UI speaks: engine methods, its own streams, the gateway's runs and the ledger ---
export type SessionMethodName = keyof typeof SessionMethodSchemas;
export type UiMethodName = MethodName | SessionMethodName | GatewayMethodName | LedgerMethodName;
type UiSchemaOf<M extends UiMethodName> = M extends MethodName
  ? (typeof MethodSchemas)[M]
  : M extends SessionMethodName
    ? (typeof SessionMethodSchemas)[M]
    : M extends GatewayMethodName
      ? (typeof GatewayMethodSchemas)[M]
      : M extends LedgerMethodName
        ? (typeof LedgerMethodSchemas)[M]
        : never;
export const UiMethodSchemas: { [M in UiMethodName]: UiSchemaOf<M> } = {
  ...MethodSchemas,
  ...SessionMethodSchemas,
  ...GatewayMethodSchemas,
  ...LedgerMethodSchemas,
};
export type UiMethodRequest<M extends UiMethodName> = z.input<UiSchemaOf<M>>;
export type UiMethodParams<M extends UiMethodName> = z.output<UiSchemaOf<M>>;
export type UiMethodResponse<M extends UiMethodName> = M extends MethodName
  ? MethodResponses[M]
  : M extends SessionMethodName
    ? SessionMethodResponses[M]
    : M extends GatewayMethodName
      ? GatewayMethodResponses[M]
      : M extends LedgerMethodName
        ? LedgerMethodResponses[M]
        : never;

export function isUiMethodName(name: string): name is UiMethodName {
  return Object.prototype.hasOwnProperty.call(UiMethodSchemas, name);
}

export function isGatewayMethodName(name: string): name is GatewayMethodName {
  return Object.prototype.hasOwnProperty.call(GatewayMethodSchemas, name);
}

export function isLedgerMethodName(name: string): name is LedgerMethodName {
  return Object.prototype.hasOwnProperty.call(LedgerMethodSchemas, name);
}
