// A sandbox's /workspace as a tar archive on the host, taken and put back by the sandbox's own tar
// through its runner (or a plain exec): the sandbox's kernel view resolves the path, so a host
// workspace mount and the sandbox's user namespace need nothing special, and the ids in the archive
// are the ones the sandbox sees. The default image has tar; an image without it cannot be
// snapshotted, and the error says so.
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readSync, writeSync } from 'node:fs';
import { Transform } from 'node:stream';
import { WardenError } from '../../../shared/errors.js';
import type { PodmanConnection } from '../podman/connection.js';
import { runExec } from '../podman/exec-session.js';
import type { Manifest } from '../diff/manifest.js';
import { ArchiveManifest } from './archive-manifest.js';

const ARCHIVE_TIMEOUT_MS = 10 * 60_000;
const STDERR_KEPT = 4096;
/** The archive is read (to hash it, and to send it back into a sandbox) this much at a time. */
const PIECE_BYTES = 4 * 1024 * 1024;

function failure(what: string, exitCode: number, stderr: string): WardenError {
  if (exitCode === 127 || exitCode === 126) {
    return new WardenError(
      'E_ENGINE',
      `${what}: the sandbox image has no tar`,
      'snapshots need tar in the image (the default image has it)',
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

function forEachPiece(file: string, body: (piece: Buffer) => void, from = 0): void {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(PIECE_BYTES);
    let at = from;
    for (let n = readSync(fd, buf, 0, PIECE_BYTES, at); n > 0; n = readSync(fd, buf, 0, PIECE_BYTES, at)) {
      body(buf.subarray(0, n));
      at += n;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * In the new sandbox, as its root: /workspace emptied first (what a sandbox planted there, a symlink to
 * /etc say, is removed, never followed), then GNU tar unpacks the archive from stdin into it: it
 * refuses members with `..`, strips a leading `/`, and makes a symlink that points out of the tree
 * only after every file is written, so no member is written through one. It runs behind the
 * sandbox's wall: whatever an archive holds reaches nothing outside that sandbox.
 */
const RESTORE_SCRIPT = 'find /workspace -mindepth 1 -delete && exec tar -C /workspace --no-same-owner -xpf -';

/**
 * Empties /workspace and unpacks the archive into it, streamed on one exec's stdin (back-pressured:
 * neither side holds it whole, and nothing is staged on the sandbox's disk). What was sent must have
 * the sha256 the snapshot recorded, or the restore fails (and the caller drops the sandbox it made).
 * Modes and times come back; owners do not (the sandbox's root has no CAP_CHOWN): every file is the
 * sandbox root's. Returns the restored tree's manifest as read from the archive (archive-manifest.ts),
 * or null when it must be walked.
 */
export async function restoreWorkspace(
  conn: PodmanConnection,
  containerId: string,
  file: string,
  sha256: string,
): Promise<Manifest | null> {
  const hash = createHash('sha256');
  // What was restored, read from the archive on its way in: the new sandbox's diff baseline (null: walk it instead).
  const manifest = new ArchiveManifest();
  let sent = 0;
  const source = createReadStream(file, { highWaterMark: PIECE_BYTES });
  const hashed = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      manifest.push(chunk);
      sent += chunk.length;
      done(null, chunk);
    },
  });
  source.once('error', (err) => hashed.destroy(err));
  const err: Buffer[] = [];
  let kept = 0;
  const result = await runExec(
    conn,
    containerId,
    { cmd: ['/bin/sh', '-c', RESTORE_SCRIPT], timeoutMs: ARCHIVE_TIMEOUT_MS },
    {
      stdinFrom: source.pipe(hashed),
      onStderr: (chunk) => {
        if (kept < STDERR_KEPT) err.push(chunk);
        kept += chunk.length;
      },
    },
  ).finally(() => source.destroy());
  if (result.exitCode !== 0) throw failure('restoring /workspace', result.exitCode, Buffer.concat(err).toString('utf8'));
  // tar may stop reading at the archive's end marker, before the record's padding: the rest is hashed
  // from the file, so the whole archive is what is compared.
  forEachPiece(file, (piece) => hash.update(piece), sent);
  if (hash.digest('hex') !== sha256) {
    throw new WardenError(
      'E_ENGINE',
      'the workspace archive changed while it was being restored',
      'remove that snapshot: it is not what was taken',
    );
  }
  return manifest.result();
}
