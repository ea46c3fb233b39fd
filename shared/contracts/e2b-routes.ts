// The E2B door's route maps: the REST control plane the `e2b` SDK reaches at E2B_API_URL, and the
// envd RPCs (Connect protocol) and HTTP file routes it reaches at E2B_SANDBOX_URL. Both are served by
// `warden serve` under one prefix, so one loopback URL is both; electron/server/e2b registers from
// these maps, and the README lists what is here and what is not.
import { answer } from './answer.js';
import type { RouteSpec } from './agent-routes.js';
import {
  E2bNewSandboxSchema,
  E2bSandboxParamsSchema,
  E2bConnectSchema,
  E2bPauseSchema,
  E2bTimeoutSchema,
  E2bListQuerySchema,
  E2bMetricsQuerySchema,
  FsListDirRequestSchema,
  FsMoveRequestSchema,
  FsPathRequestSchema,
  FsWatchDirRequestSchema,
  ProcessListRequestSchema,
  ProcessSignalRequestSchema,
  ProcessStartRequestSchema,
  type E2bListedSandbox,
  type E2bMetric,
  type E2bSandbox,
  type EntryInfo,
  type ProcessEvent,
  type ProcessInfo,
  type WatchDirEvent,
} from '../types/e2b.js';
import {
  ProcessCloseStdinRequestSchema,
  ProcessConnectRequestSchema,
  ProcessSendInputRequestSchema,
  ProcessUpdateRequestSchema,
} from '../types/e2b-process.js';

/** Where the door lives: E2B_API_URL and E2B_SANDBOX_URL are both the server's URL plus this. */
export const E2B_PREFIX = '/e2b';
/** The envd version whose behaviour the door implements (the SDK picks upload formats and options by it). */
export const E2B_ENVD_VERSION = '0.5.7';
/** The only template: the SDK's default, served by Warden's default image. */
export const E2B_TEMPLATES = ['base'] as const;

/** The REST control plane (paths relative to E2B_PREFIX). */
export const E2bRoutes = {
  'sandbox.create': {
    method: 'POST',
    path: '/v2/sandboxes',
    body: E2bNewSandboxSchema,
    bodyName: 'new sandbox',
    status: 201,
    response: answer<E2bSandbox>(),
  },
  /** The same, as SDKs before v2 ask for it. */
  'sandbox.create.v1': {
    method: 'POST',
    path: '/sandboxes',
    body: E2bNewSandboxSchema,
    bodyName: 'new sandbox',
    status: 201,
    response: answer<E2bSandbox>(),
  },
  'sandbox.list': { method: 'GET', path: '/v2/sandboxes', query: E2bListQuerySchema, response: answer<E2bListedSandbox[]>() },
  'sandbox.list.v1': { method: 'GET', path: '/sandboxes', query: E2bListQuerySchema, response: answer<E2bListedSandbox[]>() },
  'sandbox.get': {
    method: 'GET',
    path: '/sandboxes/:sandboxID',
    params: E2bSandboxParamsSchema,
    response: answer<E2bListedSandbox & { envdAccessToken: string }>(),
  },
  /** One sample of Warden's stats, now (no history). */
  'sandbox.metrics': {
    method: 'GET',
    path: '/sandboxes/:sandboxID/metrics',
    params: E2bSandboxParamsSchema,
    query: E2bMetricsQuerySchema,
    response: answer<E2bMetric[]>(),
  },
  'sandbox.kill': {
    method: 'DELETE',
    path: '/sandboxes/:sandboxID',
    params: E2bSandboxParamsSchema,
    status: 204,
    response: answer<null>(),
  },
  /** A new TTL from now (Sandbox.setTimeout), within the policy's max TTL for agents. */
  'sandbox.timeout': {
    method: 'POST',
    path: '/sandboxes/:sandboxID/timeout',
    params: E2bSandboxParamsSchema,
    body: E2bTimeoutSchema,
    bodyName: 'timeout',
    status: 204,
    response: answer<null>(),
  },
  /** Podman pause (409 when it is paused already: the SDK's `false`); connect resumes it. */
  'sandbox.pause': {
    method: 'POST',
    path: '/sandboxes/:sandboxID/pause',
    params: E2bSandboxParamsSchema,
    body: E2bPauseSchema,
    bodyName: 'pause',
    status: 204,
    response: answer<null>(),
  },
  /** A new access token for a sandbox the caller owns (Sandbox.connect): resumes a paused one, extends its TTL to `timeout`. */
  'sandbox.connect': {
    method: 'POST',
    path: '/v2/sandboxes/:sandboxID/connect',
    params: E2bSandboxParamsSchema,
    body: E2bConnectSchema,
    bodyName: 'connect',
    response: answer<E2bSandbox>(),
  },
} as const satisfies Record<string, RouteSpec>;

export type E2bRouteName = keyof typeof E2bRoutes;

/** How an envd RPC answers: one message, or a stream of them (Connect's enveloped messages). */
export type EnvdRpcKind = 'unary' | 'server-stream';

/** The envd RPCs Warden serves, by their Connect path; any other answers "not supported by Warden". */
export const EnvdRpcs = {
  'process.Process/Start': { kind: 'server-stream', request: ProcessStartRequestSchema, response: answer<{ event: ProcessEvent }>() },
  'process.Process/SendSignal': { kind: 'unary', request: ProcessSignalRequestSchema, response: answer<Record<string, never>>() },
  'process.Process/List': { kind: 'unary', request: ProcessListRequestSchema, response: answer<{ processes: ProcessInfo[] }>() },
  /** Follows a command already running, from now on (commands.connect, pty.connect). */
  'process.Process/Connect': { kind: 'server-stream', request: ProcessConnectRequestSchema, response: answer<{ event: ProcessEvent }>() },
  'process.Process/SendInput': { kind: 'unary', request: ProcessSendInputRequestSchema, response: answer<Record<string, never>>() },
  'process.Process/CloseStdin': { kind: 'unary', request: ProcessCloseStdinRequestSchema, response: answer<Record<string, never>>() },
  /** A PTY's new size (pty.resize). */
  'process.Process/Update': { kind: 'unary', request: ProcessUpdateRequestSchema, response: answer<Record<string, never>>() },
  'filesystem.Filesystem/ListDir': { kind: 'unary', request: FsListDirRequestSchema, response: answer<{ entries: EntryInfo[] }>() },
  'filesystem.Filesystem/MakeDir': { kind: 'unary', request: FsPathRequestSchema, response: answer<{ entry: EntryInfo }>() },
  'filesystem.Filesystem/Remove': { kind: 'unary', request: FsPathRequestSchema, response: answer<Record<string, never>>() },
  'filesystem.Filesystem/Move': { kind: 'unary', request: FsMoveRequestSchema, response: answer<{ entry: EntryInfo }>() },
  'filesystem.Filesystem/Stat': { kind: 'unary', request: FsPathRequestSchema, response: answer<{ entry: EntryInfo }>() },
  /** Polled, not notified: see electron/server/e2b/envd-watch.ts for what a watch can miss. */
  'filesystem.Filesystem/WatchDir': { kind: 'server-stream', request: FsWatchDirRequestSchema, response: answer<WatchDirEvent>() },
} as const;

export type EnvdRpcName = keyof typeof EnvdRpcs;
