// Builds the three parts of the desktop app into out/: main (ESM, Node), preload (CommonJS: a
// sandboxed preload cannot be an ES module) and the renderer (React, also served by `warden serve`).
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';
import type { Plugin } from 'vite';
import { RENDERER_CSP } from './electron/ui-door/csp.js';

const root = import.meta.dirname;

/** The CSP also as a meta tag in the built page (both doors send it as a header too). Not in dev,
 * where Vite's client needs inline scripts; frame-ancestors only works as a header. */
function cspMeta(): Plugin {
  const policy = RENDERER_CSP.split('; ')
    .filter((d) => !d.startsWith('frame-ancestors'))
    .join('; ');
  return {
    name: 'warden-csp-meta',
    apply: 'build',
    transformIndexHtml: () => [
      { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: policy }, injectTo: 'head-prepend' },
    ],
  };
}

export default defineConfig({
  main: {
    build: {
      outDir: resolve(root, 'out/main'),
      externalizeDeps: true,
      rollupOptions: { input: { index: resolve(root, 'electron/main/index.ts') } },
    },
  },
  preload: {
    build: {
      outDir: resolve(root, 'out/preload'),
      // Bundled whole: a sandboxed preload can require only a few Electron modules.
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve(root, 'electron/preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'renderer'),
    base: './',
    plugins: [react(), cspMeta()],
    build: {
      outDir: resolve(root, 'out/renderer'),
      emptyOutDir: true,
      sourcemap: false,
      minify: true,
      chunkSizeWarningLimit: 1500,
      rollupOptions: { input: { index: resolve(root, 'renderer/index.html') } },
    },
  },
});
