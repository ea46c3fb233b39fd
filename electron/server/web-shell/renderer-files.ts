// The built renderer (out/renderer, made by `electron-vite build`), read once and served from
// memory: a fixed set of files, so no request path ever reaches the file system.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contentTypeOf } from '../../ui-door/csp.js';

export interface RendererFile {
  body: Buffer;
  type: string;
}

/** out/renderer above this module, whether it runs from source, from out/cli or from out/main. */
export function findRendererDir(env: NodeJS.ProcessEnv = process.env, from = fileURLToPath(import.meta.url)): string | null {
  if (env.WARDEN_RENDERER_DIR) return existsSync(join(env.WARDEN_RENDERER_DIR, 'index.html')) ? env.WARDEN_RENDERER_DIR : null;
  let dir = dirname(from);
  for (let i = 0; i < 8; i++) {
    const candidate = join(dir, 'out', 'renderer');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    if (dir.endsWith(`${sep}out`) && existsSync(join(dir, 'renderer', 'index.html'))) return join(dir, 'renderer');
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return null;
}

export function loadRendererFiles(dir: string): Map<string, RendererFile> {
  const files = new Map<string, RendererFile>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!name.endsWith('.map'))
        files.set(`/${relative(dir, path).split(sep).join('/')}`, { body: readFileSync(path), type: contentTypeOf(name) });
    }
  };
  walk(dir);
  return files;
}
