// A WARDEN_HOME holding what the timeline bench opens: one finished run of N tool calls spread over
// the last hour (runs.db, as the gateway archives runs), their 2·N exec entries and some network
// entries in the ledger (as the engine writes them), and an hour of 1 Hz resource samples for the
// run's sandbox (stats.db, as the door records them). Written through the same stores the server
// reads; nothing in it needs a container, so an hour of history takes a second to make.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { RunInfo, ToolCallInfo } from '../../shared/types/run.js';
import { pendingCall } from '../../shared/types/run.js';
import { openAuditLedger, runsFile } from '../../electron/engine/open-warden.js';
import { RunArchive } from '../../electron/engine/gateway/run-archive.js';
import { loadPolicy } from '../../electron/engine/gateway/policy-load.js';
import { StatsHistoryStore, statsHistoryFile, type HistorySample } from '../../electron/engine/stats-history/history-store.js';

export interface SeededRun {
  runId: string;
  agent: string;
  sandboxId: string;
  calls: number;
  samples: number;
}

export function seedTimelineHome(home: string, calls: number, seconds: number): SeededRun {
  mkdirSync(home, { recursive: true });
  const sandboxId = randomBytes(32).toString('hex');
  const runId = `run_bench${randomBytes(4).toString('hex')}`;
  const agent = 'timeline-bench';
  // Ledger: the sandbox's creation, then each call's exec.started/exec.finished, and a connection every 20 calls.
  const ledger = openAuditLedger(home);
  const seqs: number[][] = [];
  try {
    ledger.append({ actor: agent, sandboxId, kind: 'sandbox.created', payload: { name: 'timeline-bench-box' } });
    for (let from = 0; from < calls; from += 500) {
      const batch = [];
      for (let i = from; i < Math.min(calls, from + 500); i++) {
        const argv = ['sh', '-c', `echo step ${i + 1}`];
        batch.push({ actor: agent, sandboxId, kind: 'exec.started', payload: { argv } });
        batch.push({ actor: agent, sandboxId, kind: 'exec.finished', payload: { argv, exitCode: i % 17 === 0 ? 1 : 0, durationMs: 40 } });
        if (i % 20 === 0)
          batch.push({
            actor: 'system',
            sandboxId,
            kind: 'net.connect',
            payload: {
              connId: `c${i}`,
              via: 'connect',
              host: 'registry.npmjs.org',
              port: 443,
              address: null,
              decision: 'allow',
              rule: 'bench',
            },
          });
      }
      const written = ledger.appendBatch(batch);
      for (let k = 0; k < written.length;) {
        seqs.push([written[k]!.seq, written[k + 1]!.seq]);
        k += written[k + 2]?.kind === 'net.connect' ? 3 : 2;
      }
    }
  } finally {
    ledger.close();
  }

  // The window ends now, after the entries: they are its last moments.
  const end = Date.now() + 1000;
  const start = end - seconds * 1000;

  // The run and its calls, evenly over the window, each a few hundred ms long.
  const archive = RunArchive.open(runsFile(home));
  try {
    const every = (seconds * 1000) / calls;
    const toolCalls: ToolCallInfo[] = [];
    for (let i = 0; i < calls; i++) {
      const at = start + i * every;
      const failed = i % 17 === 0;
      toolCalls.push({
        ...pendingCall({
          id: `${runId}-c${i + 1}`,
          runId,
          index: i + 1,
          tool: 'exec',
          args: { cmd: `echo step ${i + 1}` },
          startedAt: new Date(at).toISOString(),
        }),
        status: failed ? 'failed' : 'ok',
        decision: { action: 'allow', source: 'default', reason: 'no rule matched' },
        endedAt: new Date(at + 300).toISOString(),
        durationMs: 300,
        exitCode: failed ? 1 : 0,
        ledgerSeqs: seqs[i] ?? [],
      });
    }
    const run: RunInfo = {
      id: runId,
      agent,
      key: null,
      sandboxId,
      sandboxName: 'timeline-bench-box',
      status: 'finished',
      startedAt: new Date(start).toISOString(),
      endedAt: new Date(end).toISOString(),
      calls,
      failures: toolCalls.filter((c) => c.status === 'failed').length,
      outputBytes: 0,
      breaker: { state: 'closed', consecutiveFailures: 0, openedAt: null },
      budgets: loadPolicy(home).policy.budgets,
    };
    archive.saveRun(run);
    for (const c of toolCalls) archive.saveCall(c);
  } finally {
    archive.close();
  }

  // An hour of 1 Hz samples: a sawtooth of CPU, memory creeping up, bursts of network.
  const store = StatsHistoryStore.open(statsHistoryFile(home));
  try {
    const samples: HistorySample[] = [];
    for (let s = 0; s < seconds; s++)
      samples.push({
        sandboxId,
        time: start + s * 1000,
        cpu: (s % 120) / 1.5,
        memory: 64e6 + s * 20_000,
        memoryLimit: 512 * 1024 * 1024,
        rx: s % 60 < 5 ? 200_000 : 0,
        tx: s % 60 < 5 ? 20_000 : 0,
        pids: 3 + (s % 7),
      });
    store.write(samples, end);
  } finally {
    store.close();
  }
  return { runId, agent, sandboxId, calls, samples: seconds };
}
