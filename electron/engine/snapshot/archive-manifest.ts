// The workspace baseline of a reset or fork, read from the snapshot's archive on the host as it
// streams into the sandbox, instead of walking the restored /workspace again in the sandbox (a
// sha256 of every byte there: most of what a reset cost beyond doing it by hand). It gives what the
// walker (diff/manifest.ts) would list for the unpacked tree: each non-directory's path, type, mode,
// size, sha256 and, for small files, bytes. Anything it does not read exactly as the walker would
// see it (a sparse or huge member, a name that is not UTF-8, a file or folder its root could not read
// for lack of a permission bit, a device, more files or small-file bytes than a manifest holds)
// gives up (null): the caller walks the sandbox as before. The archive is Warden's own (its digest is
// checked as it streams), so this reads what was restored, not what the sandbox says.
import { createHash } from 'node:crypto';
import { DATA_MAX_BYTES, DATA_TOTAL_BYTES, MAX_FILES, type Manifest, type ManifestEntry } from '../diff/manifest.js';

const BLOCK = 512;
const utf8 = new TextDecoder('utf-8', { fatal: true });

interface Member {
  path: string;
  type: string;
  mode: number;
  size: number;
  link: string;
}

export class ArchiveManifest {
  private pending: Buffer = Buffer.alloc(0);
  private failed = false;
  private ended = false;
  private readonly files = new Map<string, ManifestEntry>();
  private dataBytes = 0;
  /** The member whose data is streaming: what of it is left, its padding, and where its bytes go. */
  private reading: { left: number; pad: number; onData: (b: Buffer) => void; onEnd: () => void } | null = null;
  /** From a GNU long-name member or a pax header: applies to the next member. */
  private longName: string | null = null;
  private longLink: string | null = null;

  push(chunk: Buffer): void {
    if (this.failed || this.ended) return;
    try {
      this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
      this.drain();
    } catch {
      this.failed = true;
    }
  }

  /** The manifest, or null when it could not be read exactly (the caller walks the sandbox). */
  result(): Manifest | null {
    if (this.failed || !this.ended) return null;
    return { files: [...this.files.values()], truncated: false };
  }

  private fail(): never {
    throw new Error('not readable here');
  }

  private drain(): void {
    while (!this.ended) {
      const r = this.reading;
      if (r) {
        if (!this.pending.length) return;
        const data = Math.min(this.pending.length, r.left);
        if (data) {
          r.onData(this.pending.subarray(0, data));
          r.left -= data;
          this.pending = this.pending.subarray(data);
        }
        if (r.left === 0) {
          const pad = Math.min(this.pending.length, r.pad);
          r.pad -= pad;
          this.pending = this.pending.subarray(pad);
          if (r.pad === 0) {
            this.reading = null;
            r.onEnd();
          }
        }
        continue;
      }
      if (this.pending.length < BLOCK) return;
      const header = this.pending.subarray(0, BLOCK);
      this.pending = this.pending.subarray(BLOCK);
      if (header.every((b) => b === 0)) {
        this.ended = true; // the end-of-archive marker: what follows is padding
        return;
      }
      this.header(header);
    }
  }

  /** A member's `size` bytes (and the padding to a whole block) go to onData, then onEnd. */
  private read(size: number, onData: (b: Buffer) => void, onEnd: () => void): void {
    const pad = Math.ceil(size / BLOCK) * BLOCK - size;
    if (size + pad === 0) onEnd();
    else this.reading = { left: size, pad, onData, onEnd };
  }

  private header(h: Buffer): void {
    const type = h[156] === 0 ? '0' : String.fromCharCode(h[156]!);
    if (h[124]! & 0x80) this.fail(); // a base-256 size: a member too large to read here
    const size = octal(h, 124, 12);
    if (type === 'L' || type === 'K' || type === 'x') {
      if (size > 64 * 1024) this.fail();
      const parts: Buffer[] = [];
      this.read(
        size,
        (b) => parts.push(Buffer.from(b)),
        () => this.applySpecial(type, Buffer.concat(parts)),
      );
      return;
    }
    const name = this.longName ?? joinName(h);
    const link = this.longLink ?? field(h, 157, 100);
    this.longName = this.longLink = null;
    this.begin({ path: relative(name), type, mode: octal(h, 100, 8) & 0o7777, size, link });
  }

  private applySpecial(kind: 'L' | 'K' | 'x', body: Buffer): void {
    if (kind === 'L') this.longName = cString(body);
    else if (kind === 'K') this.longLink = cString(body);
    else {
      for (const [key, value] of paxRecords(body)) {
        if (key === 'path') this.longName = value;
        else if (key === 'linkpath') this.longLink = value;
        else if (key === 'size' || key.startsWith('GNU.sparse')) this.fail();
      }
    }
  }

  private begin(m: Member): void {
    const skip = () =>
      this.read(
        m.size,
        () => undefined,
        () => undefined,
      );
    if (m.type === '5') {
      if ((m.mode & 0o500) !== 0o500 && m.path) this.fail(); // the walker could not list it as root without capabilities
      return skip();
    }
    if (!m.path || this.files.size >= MAX_FILES) this.fail();
    if (m.type === '0' || m.type === '7') {
      if ((m.mode & 0o400) === 0) this.fail();
      const entry: ManifestEntry = { path: m.path, type: 'file', mode: m.mode, size: m.size, sha256: null };
      this.files.set(m.path, entry);
      const hash = createHash('sha256');
      const kept: Buffer[] = [];
      const small = m.size <= DATA_MAX_BYTES;
      this.read(
        m.size,
        (b) => {
          hash.update(b);
          if (small) kept.push(Buffer.from(b));
        },
        () => {
          entry.sha256 = hash.digest('hex');
          if (small) this.keep(entry, Buffer.concat(kept));
        },
      );
      return;
    }
    if (m.type === '1') {
      const target = this.files.get(relative(m.link)) ?? this.fail();
      if (target.data) this.keep({ ...target }, target.data); // counted again: the walker sends each name's bytes
      this.files.set(m.path, { ...target, path: m.path });
      return skip();
    }
    if (m.type === '2') {
      const data = Buffer.from(m.link, 'utf8');
      const entry: ManifestEntry = { path: m.path, type: 'symlink', mode: 0o777, size: data.length, sha256: sha256(data) };
      this.keep(entry, data);
      this.files.set(m.path, entry);
      return skip();
    }
    if (m.type === '6') {
      this.files.set(m.path, { path: m.path, type: 'other', mode: m.mode, size: 0, sha256: null });
      return skip();
    }
    this.fail(); // sparse ('S'), devices and anything else: the walker reads those its own way
  }

  /** Small files' bytes, as the walker sends them (within the manifest's budget, or give up: its order differs). */
  private keep(entry: ManifestEntry, data: Buffer): void {
    this.dataBytes += data.length;
    if (this.dataBytes > DATA_TOTAL_BYTES) this.fail();
    entry.data = data;
  }
}

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

function field(h: Buffer, at: number, len: number): string {
  const raw = h.subarray(at, at + len);
  const end = raw.indexOf(0);
  return utf8.decode(end < 0 ? raw : raw.subarray(0, end));
}

function cString(b: Buffer): string {
  const end = b.indexOf(0);
  return utf8.decode(end < 0 ? b : b.subarray(0, end));
}

function octal(h: Buffer, at: number, len: number): number {
  const text = h
    .subarray(at, at + len)
    .toString('latin1')
    .replace(/\0.*$/s, '')
    .trim();
  if (!/^[0-7]*$/.test(text)) throw new Error('bad number');
  return text ? parseInt(text, 8) : 0;
}

/** ustar keeps a long name's folder in its prefix field (GNU tar writes it only in posix formats). */
function joinName(h: Buffer): string {
  const magic = h.subarray(257, 263).toString('latin1');
  const name = field(h, 0, 100);
  const prefix = magic === 'ustar\0' ? field(h, 345, 155) : '';
  return prefix ? `${prefix}/${name}` : name;
}

/** `./a/b/` → `a/b` (tar -C /workspace -cf - . names everything from `./`). */
function relative(name: string): string {
  let p = name.replace(/^\.\/+/, '').replace(/\/+$/, '');
  if (p === '.') p = '';
  if (p.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    if (p !== '') throw new Error('not a plain relative name');
  }
  return p;
}

function* paxRecords(body: Buffer): Generator<[string, string]> {
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    if (space < 0) return;
    const len = parseInt(body.subarray(at, space).toString('latin1'), 10);
    if (!len || at + len > body.length) throw new Error('bad pax record');
    const record = utf8.decode(body.subarray(space + 1, at + len - 1));
    const eq = record.indexOf('=');
    yield [record.slice(0, eq), record.slice(eq + 1)];
    at += len;
  }
}
