import type { RuntimeName } from './sandbox.js';

export type ConnectionStatus = 'connected' | 'connecting' | 'unreachable';

export interface RuntimeCheck {
  name: RuntimeName;
  installed: boolean;
  works: boolean;
  /** why it does not work, in a person's words */
  reason?: string;
}

export interface ConnectionInfo {
  id: string;
  kind: 'podman';
  socketPath: string;
  /** where the socket came from: env var, well-known path, or a service Warden started */
  source: 'CONTAINER_HOST' | 'DOCKER_HOST' | 'rootful' | 'rootless' | 'owned-service' | 'explicit';
  status: ConnectionStatus;
  version: string | null;
  apiVersion: string | null;
  rootless: boolean | null;
  cgroupVersion: string | null;
  runtimes: RuntimeCheck[];
  defaultRuntime: RuntimeName | null;
}

export type EngineEventKind = 'create' | 'start' | 'stop' | 'die' | 'oom' | 'pause' | 'unpause' | 'remove' | 'kill' | 'restart';

export interface EngineEvent {
  kind: EngineEventKind;
  sandboxId: string;
  name: string;
  time: number;
  exitCode?: number;
  /** For a die: the limit that ended the sandbox, when the exit says so (see exit-reason.ts). */
  reason?: string;
}

export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  /** what to do when not ok */
  fix?: string;
}

export interface DoctorReport {
  ok: boolean;
  dataDir: string;
  connection: ConnectionInfo | null;
  image: { name: string; present: boolean };
  checks: DoctorCheck[];
}
