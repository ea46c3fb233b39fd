// Podman-only (libpod) endpoints through the same modem as dockerode, the way Podman Desktop's
// libpod-dockerode.ts does it: a plain request answered with JSON, or a long-lived stream of
// newline-delimited JSON (events, stats). PodmanConnection wraps both in its call(), which maps
// engine errors and notices a Podman that went away.
import type Dockerode from 'dockerode';

const LIBPOD = '/v4.0.0/libpod';

export type LibpodMethod = 'GET' | 'POST' | 'DELETE';

/** A query string as the modem wants it: repeated keys become arrays (it repeats them again). */
function queryObject(search: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(search)) {
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

interface Dial {
  method: LibpodMethod;
  /** Under /libpod, with its query string if any. */
  path: string;
  /** Sent as the body; undefined sends none (a stream). */
  body?: unknown;
  isStream: boolean;
  statusCodes: Record<number, boolean | string>;
  /** Abandons the request (the modem passes it to node:http). */
  signal?: AbortSignal;
}

function dial<T>(docker: Dockerode, d: Dial): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // The modem builds the query string itself (and trims a path's last character when it has
    // nothing to add), so the query is handed over as an object.
    const [base, search] = d.path.split('?', 2) as [string, string | undefined];
    const query = search ? queryObject(search) : undefined;
    docker.modem.dial(
      {
        path: `${LIBPOD}${base}${query ? '?' : ''}`,
        method: d.method,
        // An empty `_body` keeps the modem from sending the options themselves as a POST body.
        options: { ...(query ? { _query: query } : {}), ...(d.isStream ? {} : { _body: d.body ?? {} }) },
        statusCodes: d.statusCodes,
        isStream: d.isStream,
        ...(d.signal ? { abortSignal: d.signal } : {}),
      },
      (err: unknown, data: unknown) => (err ? reject(err) : resolve(data as T)),
    );
  });
}

/** One request; `statusCodes` are the answers that count as success. */
export function libpodRequest<T>(
  docker: Dockerode,
  method: LibpodMethod,
  path: string,
  body: unknown,
  statusCodes: number[],
  signal?: AbortSignal,
): Promise<T> {
  const codes: Record<number, boolean | string> = { 400: 'bad parameter', 404: 'no such object', 409: 'conflict', 500: 'server error' };
  for (const c of statusCodes) codes[c] = true;
  return dial<T>(docker, { method, path, body, isStream: false, statusCodes: codes, ...(signal ? { signal } : {}) });
}

/** A GET whose answer is a stream that stays open. */
export function libpodStream(docker: Dockerode, path: string): Promise<NodeJS.ReadableStream> {
  return dial<NodeJS.ReadableStream>(docker, {
    method: 'GET',
    path,
    isStream: true,
    statusCodes: { 200: true, 404: 'no such object', 500: 'server error' },
  });
}

/** Calls onObject with each JSON line of the stream, as the lines complete. */
export function readJsonLines(stream: NodeJS.ReadableStream, onObject: (value: unknown) => void): void {
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) {
        try {
          onObject(JSON.parse(line));
        } catch {
          // a torn line from a dying connection: nothing to recover
        }
      }
      newline = pending.indexOf('\n');
    }
  });
}
