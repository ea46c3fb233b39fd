// The one route map of the agent HTTP API (electron/server registers from it; the AgentClient, the
// CLI's and MCP's backends are typed from it). Each route: its method and path, the zod schemas of
// its path parameters, query and body, what it answers (a type only: `answer<T>()` holds no value)
// and how (a JSON envelope, raw bytes, an NDJSON stream, or a WebSocket).
import { z } from 'zod';
import { answer } from './answer.js';
import {
  ApiExecBodySchema,
  FileListQuerySchema,
  FileQuerySchema,
  TtlRequestSchema,
  type ExecStreamEvent,
  type FileList,
  type FileWritten,
  type LiveMessage,
  type RunStreamEvent,
  type TokenInfo,
} from '../types/api.js';
import {
  ApprovalDecideSchema,
  RunQuerySchema,
  type ApprovalDecision,
  type ApprovalInfo,
  type RunDetail,
  type RunInfo,
} from '../types/run.js';
import type { WorkspaceDiff } from '../types/diff.js';
import { SandboxRefSchema, SandboxSpecSchema, type SandboxInfo, type SandboxSpecInput } from '../types/sandbox.js';
import { ForkRequestSchema, ResetRequestSchema, SnapshotRequestSchema, SnapshotTagSchema, type SnapshotInfo } from '../types/snapshot.js';

/** Path parameters; each is parsed on its own and a failure is named by its description. */
const SandboxParams = z.object({ id: SandboxRefSchema.describe('sandbox id') }).strict();
const RunParams = z.object({ run: z.string() }).strict();
const ApprovalParams = z.object({ id: z.string() }).strict();
const SnapshotParams = z.object({ id: SandboxRefSchema.describe('sandbox id'), tag: SnapshotTagSchema.describe('snapshot tag') }).strict();

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
/** How a route answers: `{result}` JSON (the default), raw bytes, NDJSON lines of `response`, or a WebSocket of them. */
export type RouteAnswerKind = 'json' | 'bytes' | 'ndjson' | 'websocket';

export interface RouteSpec {
  method: HttpMethod;
  path: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** A JSON body's schema; 'bytes' for a raw upload (application/octet-stream). */
  body?: z.ZodType | 'bytes';
  /**
   * The body's type, for a route whose door checks the body itself (the check depends on who asks):
   * its handler gets the body unparsed, and parses it with `body` when it should.
   */
  sends?: unknown;
  /** What a bad body is called in the error ("exec: cmd: …"). */
  bodyName?: string;
  /** The answer (for ndjson and websocket: one line or message). */
  response: unknown;
  answers?: RouteAnswerKind;
  /** The HTTP status of a success, when not 200. */
  status?: number;
  /** Needs no token (still Host/Origin checked). */
  public?: boolean;
}

export const AgentRoutes = {
  /** A liveness probe that says nothing. */
  health: { method: 'GET', path: '/v1/health', public: true, response: answer<{ ok: true }>() },
  whoami: { method: 'GET', path: '/v1/whoami', response: answer<Pick<TokenInfo, 'agent' | 'role'>>() },

  'sandbox.list': { method: 'GET', path: '/v1/sandboxes', response: answer<SandboxInfo[]>() },
  'sandbox.inspect': { method: 'GET', path: '/v1/sandboxes/:id', params: SandboxParams, response: answer<SandboxInfo>() },
  /** What changed in the sandbox's /workspace since it was created. */
  'sandbox.diff': { method: 'GET', path: '/v1/sandboxes/:id/diff', params: SandboxParams, response: answer<WorkspaceDiff>() },
  /** Fields no agent may ask for are the gateway's (403, recorded), so the door checks the rest itself. */
  'sandbox.create': {
    method: 'POST',
    path: '/v1/sandboxes',
    body: SandboxSpecSchema,
    sends: answer<SandboxSpecInput | Record<string, unknown>>(),
    bodyName: 'sandbox spec',
    status: 201,
    response: answer<SandboxInfo>(),
  },
  'sandbox.start': { method: 'POST', path: '/v1/sandboxes/:id/start', params: SandboxParams, response: answer<SandboxInfo>() },
  'sandbox.stop': { method: 'POST', path: '/v1/sandboxes/:id/stop', params: SandboxParams, response: answer<SandboxInfo>() },
  /** Podman pause and unpause: every process frozen (calls into it are refused until it resumes), then thawed. */
  'sandbox.pause': { method: 'POST', path: '/v1/sandboxes/:id/pause', params: SandboxParams, response: answer<SandboxInfo>() },
  'sandbox.resume': { method: 'POST', path: '/v1/sandboxes/:id/resume', params: SandboxParams, response: answer<SandboxInfo>() },
  /** A new TTL from now, kept over the create's (agents: within create.maxTtlSeconds, never none). */
  'sandbox.ttl': {
    method: 'POST',
    path: '/v1/sandboxes/:id/ttl',
    params: SandboxParams,
    body: TtlRequestSchema,
    bodyName: 'ttl',
    response: answer<SandboxInfo>(),
  },
  'sandbox.destroy': {
    method: 'DELETE',
    path: '/v1/sandboxes/:id',
    params: SandboxParams,
    response: answer<{ id: string; name: string }>(),
  },
  /** Until the call is allowed the answer is a plain HTTP error; then a 200 stream whose last event is `exit` or `error`. */
  'sandbox.exec': {
    method: 'POST',
    path: '/v1/sandboxes/:id/exec',
    params: SandboxParams,
    body: ApiExecBodySchema,
    bodyName: 'exec',
    answers: 'ndjson',
    response: answer<ExecStreamEvent>(),
  },

  'files.read': {
    method: 'GET',
    path: '/v1/sandboxes/:id/files',
    params: SandboxParams,
    query: FileQuerySchema,
    answers: 'bytes',
    response: answer<Uint8Array>(),
  },
  'files.list': {
    method: 'GET',
    path: '/v1/sandboxes/:id/files/list',
    params: SandboxParams,
    query: FileListQuerySchema,
    response: answer<FileList>(),
  },
  'files.write': {
    method: 'PUT',
    path: '/v1/sandboxes/:id/files',
    params: SandboxParams,
    query: FileQuerySchema,
    body: 'bytes',
    response: answer<FileWritten>(),
  },

  /** Snapshots of a sandbox (engine/snapshot/): root filesystem changes as an image, /workspace as an archive. */
  'sandbox.snapshot': {
    method: 'POST',
    path: '/v1/sandboxes/:id/snapshots',
    params: SandboxParams,
    body: SnapshotRequestSchema.default({}),
    bodyName: 'snapshot',
    status: 201,
    response: answer<SnapshotInfo>(),
  },
  'sandbox.snapshots': { method: 'GET', path: '/v1/sandboxes/:id/snapshots', params: SandboxParams, response: answer<SnapshotInfo[]>() },
  'snapshot.remove': {
    method: 'DELETE',
    path: '/v1/sandboxes/:id/snapshots/:tag',
    params: SnapshotParams,
    response: answer<SnapshotInfo>(),
  },
  /** The same name, recreated from the snapshot (a new id). */
  'sandbox.reset': {
    method: 'POST',
    path: '/v1/sandboxes/:id/reset',
    params: SandboxParams,
    body: ResetRequestSchema,
    bodyName: 'reset',
    response: answer<SandboxInfo>(),
  },
  /** A new sandbox from a snapshot, beside the original; counts against create.maxSandboxes. */
  'sandbox.fork': {
    method: 'POST',
    path: '/v1/sandboxes/:id/fork',
    params: SandboxParams,
    body: ForkRequestSchema,
    bodyName: 'fork',
    status: 201,
    response: answer<SandboxInfo>(),
  },

  /** An agent sees only its own runs. */
  'run.list': { method: 'GET', path: '/v1/runs', query: RunQuerySchema, response: answer<RunInfo[]>() },
  'run.get': { method: 'GET', path: '/v1/runs/:run', params: RunParams, response: answer<RunDetail>() },
  /** What changed in the run's sandbox's /workspace since the run's first call there. */
  'run.diff': { method: 'GET', path: '/v1/runs/:run/diff', params: RunParams, response: answer<WorkspaceDiff>() },
  /** The run now, then its changes until it ends. */
  'run.events': { method: 'GET', path: '/v1/runs/:run/events', params: RunParams, answers: 'ndjson', response: answer<RunStreamEvent>() },

  'approval.list': { method: 'GET', path: '/v1/approvals', response: answer<ApprovalInfo[]>() },
  /** Only the user decides; who decided is the token's owner, never a name the request gives. */
  'approval.decide': {
    method: 'POST',
    path: '/v1/approvals/:id',
    params: ApprovalParams,
    body: ApprovalDecideSchema.omit({ id: true, by: true }),
    sends: answer<{ decision: ApprovalDecision }>(),
    bodyName: 'approval',
    response: answer<ApprovalInfo>(),
  },

  /** Live runs and approvals; a user's socket may send {"type":"approval.decide",id,decision}. */
  live: { method: 'GET', path: '/v1/live', answers: 'websocket', response: answer<LiveMessage>() },
} as const satisfies Record<string, RouteSpec>;

export type AgentRouteName = keyof typeof AgentRoutes;
type Route<N extends AgentRouteName> = (typeof AgentRoutes)[N];
type KindOf<N extends AgentRouteName> = Route<N> extends { answers: infer K } ? K : 'json';

/** Routes answered with one value (JSON or bytes), as opposed to a stream. */
export type AgentCallName = { [N in AgentRouteName]: KindOf<N> extends 'json' | 'bytes' ? N : never }[AgentRouteName];
/** Routes answered with NDJSON lines. */
export type AgentStreamName = { [N in AgentRouteName]: KindOf<N> extends 'ndjson' ? N : never }[AgentRouteName];

type Part<N extends AgentRouteName, K extends 'params' | 'query', IO extends 'in' | 'out'> =
  Route<N> extends { [P in K]: infer S extends z.ZodType } ? (IO extends 'in' ? z.input<S> : z.output<S>) : undefined;
/** A route's body: as its schema accepts it (in) or gives it (out); with `sends`, as sent, and unparsed at the door. */
type BodyOf<N extends AgentRouteName, IO extends 'in' | 'out'> =
  Route<N> extends { sends: infer T }
    ? IO extends 'in'
      ? T
      : unknown
    : Route<N> extends { body: infer S }
      ? S extends z.ZodType
        ? IO extends 'in'
          ? z.input<S>
          : z.output<S>
        : Uint8Array
      : undefined;

/** An empty request part. */
type Nothing = Record<never, never>;
/** Omits the parts a route does not have, and makes optional those that may be empty (`{}` is then a whole request). */
type Present<T> = { [K in keyof T as T[K] extends undefined ? never : Nothing extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as T[K] extends undefined ? never : Nothing extends T[K] ? K : never]?: T[K];
};

/** What a caller sends: path parameters, query and body as the schemas accept them (before parsing). */
export type AgentRequest<N extends AgentRouteName> = Present<{
  params: Part<N, 'params', 'in'>;
  query: Part<N, 'query', 'in'>;
  body: BodyOf<N, 'in'>;
}>;
/** What a route's handler receives (after parsing). */
export interface AgentInput<N extends AgentRouteName> {
  params: Part<N, 'params', 'out'>;
  query: Part<N, 'query', 'out'>;
  body: BodyOf<N, 'out'>;
}
/** The answer: the `{result}` of a JSON route, the bytes of a bytes route, one line of a stream. */
export type AgentResponse<N extends AgentRouteName> = Route<N>['response'];

/** The path of a route with its parameters filled in (each URI-encoded). */
export function routePath(path: string, params: Record<string, unknown> | undefined): string {
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(String(params?.[name] ?? '')));
}
