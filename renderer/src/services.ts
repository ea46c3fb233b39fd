// What views reach outside the store: the contract client and the transient live sinks.
import { createContext, useContext } from 'react';
import type { WardenClient } from './api/client.js';
import type { StatsBuffer } from './live/stats-buffer.js';
import type { TerminalStreams } from './live/terminal-streams.js';

export interface Services {
  client: WardenClient;
  stats: StatsBuffer;
  terminals: TerminalStreams;
}

export const ServicesContext = createContext<Services | null>(null);

export function useServices(): Services {
  const services = useContext(ServicesContext);
  if (!services) throw new Error('useServices outside ServicesContext');
  return services;
}
