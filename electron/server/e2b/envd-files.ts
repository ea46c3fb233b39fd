// envd's files for the e2b SDK (sandbox.files): the HTTP /files download and upload (one file as
// raw bytes, or several as multipart form data) and filesystem.Filesystem's ListDir, Stat, MakeDir,
// Remove and Move, each one of the gateway's file calls (read, write, list, mkdir, remove, move) under
// /workspace confinement and the policy's path rules; as envd's, a list may go several levels down, a
// remove takes a directory with its content, a move takes a directory. Stat is a list of the parent
// directory, so it is judged as a list is.
import { posix } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { WardenError } from '../../../shared/errors.js';
import type { FileEntry, FileList } from '../../../shared/types/api.js';
import type { EntryInfo, EnvdWrittenFile, FileTypeName } from '../../../shared/types/e2b.js';
import type { Gateway } from '../../engine/gateway/gateway.js';
import type { AgentContext } from '../../engine/gateway/call-spec.js';
import { E2bAlreadyExists } from './e2b-errors.js';
import { wardenPath } from './envd-paths.js';

const TYPES: Record<FileEntry['type'], FileTypeName> = {
  file: 'FILE_TYPE_FILE',
  dir: 'FILE_TYPE_DIRECTORY',
  symlink: 'FILE_TYPE_SYMLINK',
  other: 'FILE_TYPE_UNSPECIFIED',
};

/** `ls -l`'s permission text, e.g. drwxr-xr-x. */
function permissions(type: FileEntry['type'], mode: number): string {
  const bits = 'rwxrwxrwx'.split('').map((c, i) => (mode & (1 << (8 - i)) ? c : '-'));
  return (type === 'dir' ? 'd' : type === 'symlink' ? 'l' : '-') + bits.join('');
}

export function entryInfo(dir: string, e: FileEntry): EntryInfo {
  return {
    name: e.name,
    type: TYPES[e.type],
    path: posix.join(dir, e.name),
    size: String(e.size),
    mode: e.mode,
    permissions: permissions(e.type, e.mode),
    owner: '',
    group: '',
    modifiedTime: e.mtime,
  };
}

/** Depth 0 is envd's default, one level; deeper lists are walked in the sandbox (bounded: file-tree.ts), each entry with its full path. */
export async function listDir(gateway: Gateway, ctx: AgentContext, sandboxId: string, path: string, depth: number) {
  if (depth > 1) {
    const tree = await gateway.files.tree(ctx, sandboxId, wardenPath(path), depth);
    return { entries: tree.entries.map((e) => entryInfo(posix.dirname(posix.join(tree.path, e.path)), e)) };
  }
  const list: FileList = await gateway.files.list(ctx, sandboxId, wardenPath(path));
  return { entries: list.entries.map((e) => entryInfo(list.path, e)) };
}

export async function stat(gateway: Gateway, ctx: AgentContext, sandboxId: string, path: string): Promise<{ entry: EntryInfo }> {
  const target = wardenPath(path);
  const absolute = posix.resolve('/workspace', target);
  if (absolute === '/workspace') {
    await gateway.files.list(ctx, sandboxId, absolute);
    return { entry: { ...entryInfo('/', { name: 'workspace', type: 'dir', size: 0, mode: 0o755, mtime: new Date(0).toISOString() }) } };
  }
  const parent = await gateway.files.list(ctx, sandboxId, posix.dirname(absolute));
  const found = parent.entries.find((e) => e.name === posix.basename(absolute));
  if (!found) throw new WardenError('E_NOT_FOUND', `${path} does not exist`);
  return { entry: entryInfo(parent.path, found) };
}

/** MakeDir: the directory and its parents; one that is already there is envd's already_exists. */
export async function makeDir(gateway: Gateway, ctx: AgentContext, sandboxId: string, path: string): Promise<{ entry: EntryInfo }> {
  const made = await gateway.files.makeDir(ctx, sandboxId, wardenPath(path));
  if (!made.created) throw new E2bAlreadyExists(made.path);
  const entry = { name: posix.basename(made.path), type: 'dir' as const, size: 0, mode: 0o755, mtime: new Date().toISOString() };
  return { entry: entryInfo(posix.dirname(made.path), entry) };
}

export async function remove(gateway: Gateway, ctx: AgentContext, sandboxId: string, path: string): Promise<Record<string, never>> {
  // As envd's: a directory goes with everything in it (file-call.ts checks every path in it against the policy first).
  await gateway.files.remove(ctx, sandboxId, wardenPath(path), undefined, { recursive: true });
  return {};
}

export async function move(
  gateway: Gateway,
  ctx: AgentContext,
  sandboxId: string,
  from: string,
  to: string,
): Promise<{ entry: EntryInfo }> {
  const moved = await gateway.files.move(ctx, sandboxId, wardenPath(from), wardenPath(to), undefined, { dirs: true });
  return { entry: entryInfo(posix.dirname(moved.path), moved.entry) };
}

export function readFile(gateway: Gateway, ctx: AgentContext, sandboxId: string, path: string | undefined): Promise<Buffer> {
  if (!path) throw new WardenError('E_BAD_INPUT', 'path is required');
  return gateway.files.read(ctx, sandboxId, wardenPath(path));
}

/** The body as sent: gzip (files.write with gzip) is undone, bounded so a small bomb cannot become a large file. */
function decoded(body: Buffer, encoding: string, maxBytes: number): Buffer {
  if (encoding === '' || encoding === 'identity') return body;
  if (encoding !== 'gzip') throw new WardenError('E_BAD_INPUT', `Content-Encoding ${encoding} is not accepted`, 'send gzip or identity');
  try {
    return gunzipSync(body, { maxOutputLength: maxBytes + 1 });
  } catch (err) {
    if (err instanceof RangeError) throw new WardenError('E_TOO_LARGE', `the upload unpacks to more than ${maxBytes} bytes`);
    throw new WardenError('E_BAD_INPUT', 'the gzip body could not be read');
  }
}

/** The files of an upload: the body itself for one file (octet-stream), or each `file` part of a form. */
async function uploadedFiles(contentType: string, raw: unknown, path: string | undefined, encoding: string, maxBytes: number) {
  if (!Buffer.isBuffer(raw)) throw new WardenError('E_BAD_INPUT', 'send the file as multipart/form-data or application/octet-stream');
  const body = decoded(raw, encoding, maxBytes);
  if (!contentType.startsWith('multipart/form-data')) {
    if (!path) throw new WardenError('E_BAD_INPUT', 'path is required for an application/octet-stream upload');
    return [{ path, data: body }];
  }
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new WardenError('E_BAD_INPUT', 'the multipart form could not be read');
  }
  const files: { path: string; data: Buffer }[] = [];
  for (const part of form.getAll('file')) {
    if (typeof part === 'string') throw new WardenError('E_BAD_INPUT', 'each "file" part must be a file');
    const name = path ?? part.name;
    if (!name) throw new WardenError('E_BAD_INPUT', "each file needs a path (the part's filename, or ?path=)");
    files.push({ path: name, data: Buffer.from(await part.arrayBuffer()) });
  }
  if (files.length === 0) throw new WardenError('E_BAD_INPUT', 'the form holds no "file" part');
  return files;
}

export async function writeFiles(
  gateway: Gateway,
  ctx: AgentContext,
  sandboxId: string,
  upload: { contentType: string; contentEncoding: string; body: unknown; path: string | undefined },
): Promise<EnvdWrittenFile[]> {
  const written: EnvdWrittenFile[] = [];
  const max = gateway.policy.files.maxWriteBytes;
  // One after another: each is its own call in the run, in the order the caller gave them.
  for (const file of await uploadedFiles(upload.contentType, upload.body, upload.path, upload.contentEncoding, max)) {
    const done = await gateway.files.write(ctx, sandboxId, wardenPath(file.path), file.data);
    written.push({ name: posix.basename(done.path), type: 'file', path: done.path });
  }
  return written;
}
