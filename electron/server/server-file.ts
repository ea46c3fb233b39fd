// WARDEN_HOME/server.json says where a running server listens (never its token), so the CLI and MCP
// can use it instead of opening a second engine.
import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import type { ServerFile } from '../../shared/types/api.js';

export function serverFilePath(home: string): string {
  return join(home, 'server.json');
}

export function writeServerFile(home: string, info: ServerFile): void {
  const path = serverFilePath(home);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function removeServerFile(home: string, pid = process.pid): void {
  const found = readServerFile(home);
  if (found && found.pid === pid) rmSync(serverFilePath(home), { force: true });
}

export function readServerFile(home: string): ServerFile | null {
  try {
    const info = JSON.parse(readFileSync(serverFilePath(home), 'utf8')) as ServerFile;
    return typeof info.port === 'number' && typeof info.pid === 'number' ? info : null;
  } catch {
    return null;
  }
}

/** The running server of this home, if its process is alive and it answers. */
export async function findServer(home: string): Promise<ServerFile | null> {
  const info = readServerFile(home);
  if (!info) return null;
  try {
    process.kill(info.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  // A server busy with many calls may be slow to answer; only one that refuses is taken as gone.
  for (const timeoutMs of [1500, 10_000]) {
    const status = await healthStatus(info.url, timeoutMs);
    if (status !== 'timeout') return status === 200 || status === 401 ? info : null;
  }
  return null;
}

/**
 * GET /v1/health over node:http, not fetch(): on Node 20 the first fetch() in a process loads undici
 * (30–60 ms of CPU here), which every CLI command would pay just to find its server.
 */
function healthStatus(url: string, timeoutMs: number): Promise<number | 'timeout' | 'refused'> {
  return new Promise((resolve) => {
    const req = get(`${url}/v1/health`, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('timeout', () => {
      resolve('timeout');
      req.destroy();
    });
    req.on('error', () => resolve('refused'));
  });
}
