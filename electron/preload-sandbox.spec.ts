// The preload compiles against electron/preload/sandboxed-electron.d.ts, not Electron's own types
// (those bring all of Node). This checks, at compile time (`tsc -p .`), that Electron's real objects
// still fit that smaller shape, so the preload's compile proves something about the real thing.
import type { contextBridge, ipcRenderer } from 'electron';
import { describe, expectTypeOf, it } from 'vitest';
import type * as Sandboxed from './preload/sandboxed-electron.js';

/** Compiles only when Electron's `Real` can stand where the preload expects `Subset`. */
type Fits<Real extends Subset, Subset> = Real;

describe('the sandboxed preload types', () => {
  it("are a subset of Electron's", () => {
    expectTypeOf<Fits<typeof contextBridge, typeof Sandboxed.contextBridge>>().not.toBeNever();
    expectTypeOf<Fits<typeof ipcRenderer, typeof Sandboxed.ipcRenderer>>().not.toBeNever();
  });
});
