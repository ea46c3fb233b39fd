// A sandbox's /workspace as a tar archive on the host, taken and put back by the sandbox's own tar
// through its runner (or a plain exec): the sandbox's kernel view resolves the path, so a host
// workspace mount and the sandbox's user namespace need nothing special, and the ids in the archive
// are the ones the sandbox sees. The default image has tar and base64 (coreutils); an image without
// them cannot be snapshotted, and the error says so.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { WardenError } from '../../../shared/errors.js';
import type { PodmanConnection } from '../podman/connection.js';
import { runExec } from '../podman/exec-session.js';

const ARCHIVE_TIMEOUT_MS = 10 * 60_000;
const STDERR_KEPT = 4096;

function failure(what: string, exitCode: number, stderr: string): WardenError {
  if (exitCode === 127 || exitCode === 126) {
    return new WardenError(
      'E_ENGINE',
      `${what}: the sandbox image has no tar or base64`,
      'snapshots need tar and base64 in the image (the default image has them)',
    );
  }
  return new WardenError('E_ENGINE', `${what} failed in the sandbox (exit ${exitCode}): ${stderr.slice(0, 300)}`);
}

/** Writes /workspace as a tar archive to `file`; returns its sha256 and size. */
export async function archiveWorkspace(
  conn: PodmanConnection,
  containerId: string,
  file: string,
): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  const fd = openSync(file, 'wx', 0o600);
  let bytes = 0;
  const err: Buffer[] = [];
  try {
    const result = await runExec(
      conn,
      containerId,
      { cmd: ['tar', '-C', '/workspace', '--numeric-owner', '-cf', '-', '.'], timeoutMs: ARCHIVE_TIMEOUT_MS },
      {
        onStdout: (chunk) => {
          hash.update(chunk);
          writeSync(fd, chunk);
          bytes += chunk.length;
        },
        onStderr: (chunk) => void (err.length < 16 && err.push(chunk)),
      },
    );
    if (result.exitCode !== 0) throw failure('archiving /workspace', result.exitCode, Buffer.concat(err).toString('utf8'));
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** The archive's sha256, read back from the file (checked against the manifest before a restore). */
export function archiveDigest(file: string): { sha256: string; bytes: number; data: Buffer } {
  const data = readFileSync(file);
  return { sha256: createHash('sha256').update(data).digest('hex'), bytes: data.length, data };
}

/**
 * Empties /workspace and unpacks the archive into it. Modes and times come back; owners do not (the
 * sandbox's root has no CAP_CHOWN): every file is the sandbox root's, as the default image has them.
 */
export async function restoreWorkspace(conn: PodmanConnection, containerId: string, data: Buffer): Promise<void> {
  const err: Buffer[] = [];
  let kept = 0;
  const result = await runExec(
    conn,
    containerId,
    {
      // stdin crosses the exec as text: the archive goes as base64.
      cmd: ['/bin/sh', '-c', 'find /workspace -mindepth 1 -delete && base64 -d | tar -C /workspace --no-same-owner -xpf -'],
      stdin: data.toString('base64'),
      timeoutMs: ARCHIVE_TIMEOUT_MS,
    },
    {
      onStderr: (chunk) => {
        if (kept < STDERR_KEPT) err.push(chunk);
        kept += chunk.length;
      },
    },
  );
  if (result.exitCode !== 0) throw failure('restoring /workspace', result.exitCode, Buffer.concat(err).toString('utf8'));
}
