// Where the page's time goes during the terminal throughput run: a V8 CPU profile of the page
// (self time by function, top 25) and CPU per Chromium process. For iterating on issue 5, not part
// of `npm run bench`:  flock /tmp/warden-bench.lock npx tsx bench/ui/profile-terminal.ts [MiB]
import { randomBytes } from 'node:crypto';
import { buildApp, startStack } from './stack.js';
import { openDetail, pageThroughput, base64Bytes } from './terminal.js';
import { commandLine, cpuSeconds, descendants } from './proc.js';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] };

async function main(): Promise<void> {
  const mib = Number(process.argv[2] ?? 30);
  if (process.env.BENCH_UI_SKIP_BUILD !== '1') buildApp();
  const stack = await startStack(`bench-ui-prof-${randomBytes(3).toString('hex')}`);
  try {
    const sb = await stack.createSandbox(`${stack.runId}-t`, ['--memory', '1g', '--cpus', '2']);
    await openDetail(stack.page, sb.name);
    await pageThroughput(stack.page, 4, 0, 60_000);
    const chromium = descendants(process.pid).filter((p) => /chrom/i.test(commandLine(p)));
    const before = new Map(chromium.map((p) => [p, cpuSeconds([p])]));
    await stack.page.send('Profiler.enable', {}, true);
    await stack.page.send('Profiler.setSamplingInterval', { interval: 500 }, true);
    await stack.page.send('Profiler.start', {}, true);
    const p = await pageThroughput(stack.page, mib, 1, 300_000);
    const { profile } = (await stack.page.send('Profiler.stop', {}, true)) as {
      profile: { nodes: Node[]; samples: number[]; startTime: number; endTime: number };
    };
    const mb = base64Bytes(mib) / 1048576;
    console.log(`throughput ${p ? (mb / (p.ms / 1000)).toFixed(1) : '–'} MB/s (${p?.ms.toFixed(0)} ms)`);
    const secs = (p?.ms ?? 1) / 1000;
    for (const pid of chromium) {
      const used = cpuSeconds([pid]) - before.get(pid)!;
      if (used > 0.05)
        console.log(
          `  ${((100 * used) / secs).toFixed(0).padStart(3)} %  ${commandLine(pid)
            .replace(/--[^ ]*=[^ ]{40,}/g, '')
            .match(/--type=[a-z-]+|^\S+/g)
            ?.join(' ')}`,
        );
    }
    const self = new Map<string, number>();
    const total = profile.samples.length;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const counts = new Map<number, number>();
    for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
    for (const [id, c] of counts) {
      const n = byId.get(id)!;
      const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
      self.set(key, (self.get(key) ?? 0) + c);
    }
    console.log(`samples ${total}; self time, % of the run:`);
    for (const [k, c] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25))
      console.log(`  ${((100 * c) / total).toFixed(1).padStart(5)}  ${k}`);
  } finally {
    await stack.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
