// envd's filesystem.Filesystem/WatchDir for the e2b SDK (sandbox.files.watchDir), by polling: Warden
// has no notify channel out of a sandbox, so the watched tree is walked again every POLL_MS (the
// bounded walker of podman/file-tree.ts) and each walk is compared with the last. What that cannot
// see: changes undone between two looks (a file made and removed, written and put back within a
// second), several writes in one interval (one WRITE), a rename (a REMOVE and a CREATE), a write that
// keeps size and mtime. The first look is the gateway's file.list call (policy, the run, the ledger);
// later looks check the sandbox as a call does but are not calls of their own (file-verbs.ts `look`).
import { posix } from 'node:path';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { WardenError } from '../../../shared/errors.js';
import type { FsEventTypeName, FsWatchDirRequestSchema, WatchDirEvent } from '../../../shared/types/e2b.js';
import type { AgentContext } from '../../engine/gateway/call-spec.js';
import type { Gateway } from '../../engine/gateway/gateway.js';
import { MAX_TREE_DEPTH, type TreeEntry } from '../../engine/podman/file-tree.js';
import type { StreamMeter } from '../stream-meter.js';
import { ConnectStream } from './connect-protocol.js';
import { E2bUnsupported } from './e2b-errors.js';
import { wardenPath } from './envd-paths.js';
import { entryInfo } from './envd-files.js';

/** How often a watched tree is looked at again. */
export const POLL_MS = 1000;
/** Looks in a row the engine may fail before the watch ends with the last one's error. */
const MAX_FAILED_LOOKS = 3;
const REFUSALS = new Set(['E_POLICY_DENIED', 'E_UNAUTHORIZED', 'E_NOT_FOUND', 'E_BAD_INPUT', 'E_TOO_LARGE', 'E_CONFLICT']);
/** Whether a failed look may pass: the engine's trouble, not an answer about the path or the agent. */
const passing = (err: unknown) => !(err instanceof WardenError && REFUSALS.has(err.code));
/** Watches one agent may hold open at once: each costs a walk in its sandbox every POLL_MS. */
export const MAX_AGENT_WATCHES = 4;

type Snapshot = Map<string, TreeEntry>;

const snapshotOf = (entries: TreeEntry[]): Snapshot => new Map(entries.map((e) => [e.path, e]));

/** The events that take `before` to `after`, in path order: what one poll can tell. */
export function watchEvents(before: Snapshot, after: Snapshot): { name: string; type: FsEventTypeName; entry?: TreeEntry }[] {
  const out: { name: string; type: FsEventTypeName; entry?: TreeEntry }[] = [];
  for (const [name, was] of before) {
    const now = after.get(name);
    if (!now || now.type !== was.type) out.push({ name, type: 'EVENT_TYPE_REMOVE' });
  }
  for (const [name, now] of after) {
    const was = before.get(name);
    if (!was || was.type !== now.type) out.push({ name, type: 'EVENT_TYPE_CREATE', entry: now });
    else if (now.type !== 'dir' && (now.size !== was.size || now.mtime !== was.mtime))
      out.push({ name, type: 'EVENT_TYPE_WRITE', entry: now });
    else if (now.mode !== was.mode) out.push({ name, type: 'EVENT_TYPE_CHMOD', entry: now });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export class WatchTable {
  private readonly open = new Map<string, number>();

  /** Counts a watch of the agent's for as long as `body` runs; past the bound, refused. */
  async hold(agent: string, body: () => Promise<void>): Promise<void> {
    const n = this.open.get(agent) ?? 0;
    if (n >= MAX_AGENT_WATCHES)
      throw new WardenError('E_TOO_LARGE', `agent ${agent} has ${n} directory watches open, the most Warden keeps`, 'stop one first');
    this.open.set(agent, n + 1);
    try {
      await body();
    } finally {
      const left = (this.open.get(agent) ?? 1) - 1;
      if (left > 0) this.open.set(agent, left);
      else this.open.delete(agent);
    }
  }
}

export interface WatchDeps {
  gateway: Gateway;
  watches: WatchTable;
  streams?: StreamMeter;
}

/** WatchDir: start once the first look is allowed, then each change as a filesystem event, until the client goes or a look fails. */
export async function watchDir(
  { gateway, watches, streams }: WatchDeps,
  ctx: AgentContext,
  sandboxId: string,
  request: z.output<typeof FsWatchDirRequestSchema>,
  reply: FastifyReply,
  keepaliveMs: number,
): Promise<void> {
  if (request.allowNetworkMounts) throw new E2bUnsupported('watching network mounts (allowNetworkMounts)');
  const path = wardenPath(request.path);
  const depth = request.recursive ? MAX_TREE_DEPTH : 1;
  await watches.hold(ctx.agent, async () => {
    const first = await gateway.files.tree(ctx, sandboxId, path, depth);
    const stream = new ConnectStream(reply, streams);
    const send = (event: WatchDirEvent) => stream.send(event);
    send({ start: {} });
    const alive = setInterval(() => send({ keepalive: {} }), keepaliveMs);
    let known = snapshotOf(first.entries);
    let failedLooks = 0;
    try {
      while (!stream.gone.aborted) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            stream.gone.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, POLL_MS);
          stream.gone.addEventListener('abort', done, { once: true });
        });
        if (stream.gone.aborted) break;
        let looked: TreeEntry[];
        try {
          looked = await gateway.files.look(ctx, sandboxId, first.path, depth);
          failedLooks = 0;
        } catch (err) {
          // A look the engine could not answer (a busy host: a timeout, a runner being replaced) is
          // tried at the next poll; a refusal, or a third failure in a row, ends the watch.
          if (!passing(err) || ++failedLooks >= MAX_FAILED_LOOKS) throw err;
          continue;
        }
        const now = snapshotOf(looked);
        for (const e of watchEvents(known, now)) {
          const entry = request.includeEntry && e.entry ? { entry: entryInfo(posix.dirname(posix.join(first.path, e.name)), e.entry) } : {};
          send({ filesystem: { name: e.name, type: e.type, ...entry } });
        }
        known = now;
      }
      stream.end();
    } catch (err) {
      stream.end(err);
    } finally {
      clearInterval(alive);
    }
  });
}
