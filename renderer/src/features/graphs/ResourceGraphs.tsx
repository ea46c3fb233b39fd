// CPU, memory against its limit, network and processes over the last minutes, at 1 Hz.
import { formatPercent, formatRate } from '../../lib/format.js';
import { formatByteSize } from '../../../../shared/types/units.js';
import { LiveChart } from './LiveChart.js';

const nice = (max: number, floor: number): [number, number] => [0, Math.max(floor, max * 1.15)];

export function ResourceGraphs({ sandboxId }: { sandboxId: string }) {
  return (
    <div className="charts">
      <LiveChart
        sandboxId={sandboxId}
        testId="chart-cpu"
        title="CPU"
        lines={[{ label: 'cpu', color: '#5aa9ff', pick: (s) => s.cpu, fill: true }]}
        format={(v) => formatPercent(v)}
        range={(max) => nice(max, 100)}
        headline={(s) => formatPercent(s.cpuPercent)}
      />
      <LiveChart
        sandboxId={sandboxId}
        testId="chart-memory"
        title="Memory"
        lines={[
          { label: 'used', color: '#b18cff', pick: (s) => s.memory, fill: true },
          { label: 'limit', color: '#e0646a', pick: (s) => s.memoryLimit, dash: [6, 4] },
        ]}
        format={(v) => formatByteSize(v)}
        range={(max) => nice(max, 1024 * 1024)}
        headline={(s) => `${formatByteSize(s.memoryBytes)} of ${formatByteSize(s.memoryLimitBytes)}`}
      />
      <LiveChart
        sandboxId={sandboxId}
        testId="chart-network"
        title="Network"
        lines={[
          { label: 'in', color: '#4cc38a', pick: (s) => s.rx },
          { label: 'out', color: '#f0a44b', pick: (s) => s.tx },
        ]}
        format={(v) => formatRate(v)}
        range={(max) => nice(max, 1024)}
        headline={(s) => `${formatByteSize(s.netRxBytes)} in · ${formatByteSize(s.netTxBytes)} out`}
      />
      <LiveChart
        sandboxId={sandboxId}
        testId="chart-pids"
        title="Processes"
        lines={[{ label: 'pids', color: '#d7c35a', pick: (s) => s.pids }]}
        format={(v) => String(Math.round(v))}
        range={(max) => nice(max, 10)}
        headline={(s) => String(s.pids)}
      />
    </div>
  );
}
