// A sandbox's /workspace as a tar archive on the host, taken and put back by the sandbox's own tar
// through its runner (or a plain exec): the sandbox's kernel view resolves the path, so a host
// workspace mount and the sandbox's user namespace need nothing special, and the ids in the archive
// are the ones the sandbox sees. The default image has tar and base64 (coreutils); an image without
// them cannot be snapshotted, and the error says so.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { WardenError } from '../../../shared/errors.js';
import type { PodmanConnection } from '../podman/connection.js';
import { runExec } from '../podman/exec-session.js';

const ARCHIVE_TIMEOUT_MS = 10 * 60_000;
const STDERR_KEPT = 4096;
/** The archive crosses into the sandbox this much at a time. */
const PIECE_BYTES = 4 * 1024 * 1024;

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

/**
 * Writes /workspace as a tar archive to `file`; returns its sha256 and size. The stream comes from the
 * sandbox (its tar, its files: a sparse file of terabytes costs it nothing), so it is cut off at
 * `maxBytes` rather than left to fill the host's disk under WARDEN_HOME.
 */
export async function archiveWorkspace(
  conn: PodmanConnection,
  containerId: string,
  file: string,
  maxBytes: number,
): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  const fd = openSync(file, 'wx', 0o600);
  let bytes = 0;
  const err: Buffer[] = [];
  const over = new AbortController();
  try {
    const result = await runExec(
      conn,
      containerId,
      { cmd: ['tar', '-C', '/workspace', '--numeric-owner', '--sparse', '-cf', '-', '.'], timeoutMs: ARCHIVE_TIMEOUT_MS },
      {
        onStdout: (chunk) => {
          if (over.signal.aborted) return;
          if (bytes + chunk.length > maxBytes) return over.abort('the workspace archive is over its limit');
          hash.update(chunk);
          writeSync(fd, chunk);
          bytes += chunk.length;
        },
        onStderr: (chunk) => void (err.length < 16 && err.push(chunk)),
        signal: over.signal,
      },
    );
    if (over.signal.aborted) {
      throw new WardenError(
        'E_TOO_LARGE',
        `the archive of /workspace is over ${maxBytes} bytes, the most a snapshot keeps`,
        'remove what the snapshot need not keep from /workspace (large or sparse files) and take it again',
      );
    }
    if (result.exitCode !== 0) throw failure('archiving /workspace', result.exitCode, Buffer.concat(err).toString('utf8'));
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** The archive's sha256 and size, read back from the file in pieces (checked against the manifest before a reset). */
export function archiveDigest(file: string): { sha256: string; bytes: number } {
  const hash = createHash('sha256');
  let bytes = 0;
  forEachPiece(file, (piece) => {
    hash.update(piece);
    bytes += piece.length;
  });
  return { sha256: hash.digest('hex'), bytes };
}

function forEachPiece(file: string, body: (piece: Buffer) => void): void {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(PIECE_BYTES);
    for (let n = readSync(fd, buf, 0, PIECE_BYTES, null); n > 0; n = readSync(fd, buf, 0, PIECE_BYTES, null)) body(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}

async function sh(
  conn: PodmanConnection,
  containerId: string,
  what: string,
  script: string,
  args: string[],
  stdin?: string,
): Promise<void> {
  const err: Buffer[] = [];
  let kept = 0;
  const result = await runExec(
    conn,
    containerId,
    { cmd: ['/bin/sh', '-c', script, 'sh', ...args], timeoutMs: ARCHIVE_TIMEOUT_MS, ...(stdin !== undefined ? { stdin } : {}) },
    {
      onStderr: (chunk) => {
        if (kept < STDERR_KEPT) err.push(chunk);
        kept += chunk.length;
      },
    },
  );
  if (result.exitCode !== 0) throw failure(what, result.exitCode, Buffer.concat(err).toString('utf8'));
}

/**
 * Empties /workspace and unpacks the archive into it. The archive goes in pieces (stdin crosses an
 * exec as text, so each piece as base64) to a file beside what it restores, so neither side holds it
 * whole; what arrived must have the sha256 the snapshot recorded, or nothing is unpacked. Modes and
 * times come back; owners do not (the sandbox's root has no CAP_CHOWN): every file is the sandbox root's.
 */
export async function restoreWorkspace(conn: PodmanConnection, containerId: string, file: string, sha256: string): Promise<void> {
  const temp = `/workspace/.warden-restore-${randomBytes(6).toString('hex')}.tar`;
  await sh(conn, containerId, 'emptying /workspace', 'find /workspace -mindepth 1 -delete && : > "$1"', [temp]);
  const hash = createHash('sha256');
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(PIECE_BYTES);
    for (let n = readSync(fd, buf, 0, PIECE_BYTES, null); n > 0; n = readSync(fd, buf, 0, PIECE_BYTES, null)) {
      const piece = buf.subarray(0, n);
      hash.update(piece);
      await sh(conn, containerId, 'restoring /workspace', 'base64 -d >> "$1"', [temp], piece.toString('base64'));
    }
  } finally {
    closeSync(fd);
  }
  if (hash.digest('hex') !== sha256) {
    await sh(conn, containerId, 'cleaning up', 'rm -f "$1"', [temp]);
    throw new WardenError(
      'E_ENGINE',
      'the workspace archive changed while it was being restored',
      'remove that snapshot: it is not what was taken',
    );
  }
  await sh(conn, containerId, 'restoring /workspace', 'tar -C /workspace --no-same-owner -xpf "$1"; rc=$?; rm -f "$1"; exit $rc', [temp]);
}
