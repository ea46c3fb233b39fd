// A real server on a real Podman for the specs: a temp home, a given policy, and a real ledger in
// that home (MemoryAudit stands in where a spec needs no chain).
import { openTestEngine, type TestEngine } from './podman-fixture.js';
import { TEST_LABEL_KEY } from './test-label.js';
import type { AuditRecord } from '../engine/audit-sink.js';
import { parsePolicy, defaultPolicyPath } from '../engine/gateway/policy-load.js';
import { PolicySchema, type Policy } from '../../shared/types/policy.js';
import { readFileSync } from 'node:fs';
import { startServer, type RunningServer } from '../server/index.js';
import { AgentClient } from '../server/client.js';
import { openAuditLedger } from '../engine/open-warden.js';
import type { Ledger, LedgerOptions } from '../engine/ledger/index.js';
import type { LedgerEntry } from '../../shared/types/ledger.js';

export interface MemoryEntry extends AuditRecord {
  seq: number;
}

export class MemoryAudit {
  readonly entries: MemoryEntry[] = [];
  append(r: AuditRecord): { seq: number } {
    const seq = this.entries.length + 1;
    this.entries.push({ ...r, seq });
    return { seq };
  }
  close(): void {}
}

export function defaultPolicy(): Policy {
  return parsePolicy(readFileSync(defaultPolicyPath()!, 'utf8'), 'policy.default.yaml');
}

export function policyWith(patch: (p: Policy) => void): Policy {
  const p = structuredClone(defaultPolicy());
  patch(p);
  return PolicySchema.parse(p);
}

/** The real ledger of the test home, read back as a list (what the specs compare with). */
export class LedgerAudit {
  constructor(readonly ledger: Ledger) {}
  append(r: AuditRecord) {
    return this.ledger.append(r);
  }
  appendBatch(rs: AuditRecord[]) {
    return this.ledger.appendBatch(rs);
  }
  appendBatchAsync(rs: AuditRecord[]): Promise<unknown[]> {
    return this.ledger.appendBatchAsync(rs);
  }
  /** The next entry appended that matches: an event a spec waits for instead of a time. */
  nextEntry(pred: (e: LedgerEntry) => boolean): Promise<LedgerEntry> {
    return new Promise((resolve) => {
      const off = this.ledger.subscribe((e) => {
        if (pred(e)) {
          off();
          resolve(e);
        }
      });
    });
  }

  get entries(): MemoryEntry[] {
    return this.ledger
      .entries({ limit: 100_000 })
      .map((e) => ({ seq: e.seq, actor: e.actor, sandboxId: e.sandboxId, kind: e.kind, payload: e.payload }));
  }
  close(): void {
    this.ledger.close();
  }
}

export interface TestServer {
  server: RunningServer;
  t: TestEngine;
  audit: LedgerAudit;
  agent(name: string, runKey?: string): AgentClient;
  user(): AgentClient;
  labels: Record<string, string>;
  close(): Promise<void>;
}

export async function openTestServer(policy: Policy = defaultPolicy(), ledgerOptions?: LedgerOptions): Promise<TestServer> {
  const t = await openTestEngine();
  const ledger = openAuditLedger(t.home, ledgerOptions);
  const audit = new LedgerAudit(ledger);
  const server = await startServer({ home: t.home, policy, podman: t.engine, ledger, audit, watch: false, announce: false });
  const clients = new Map<string, string>();
  return {
    server,
    t,
    audit,
    labels: { [TEST_LABEL_KEY]: t.runId },
    agent(name, runKey) {
      let token = clients.get(name);
      if (!token) clients.set(name, (token = server.tokens.create(name).token));
      return new AgentClient(server.url, token, runKey ?? null);
    },
    user() {
      return new AgentClient(server.url, server.tokens.userToken());
    },
    async close() {
      await server.close();
      await t.cleanup();
    },
  };
}
