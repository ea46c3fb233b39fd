// The preload exposes ONE object, window.warden: a typed invoke over the shared method map and a
// single event subscription. No Node, no ipcRenderer, nothing else reaches the page.
import { contextBridge, ipcRenderer } from 'electron';
import type { EventMessage } from '../../shared/contracts/events.js';
import type { WardenBridge } from '../../shared/contracts/bridge.js';
import type { IPC_CHANNELS } from '../../shared/contracts/methods.js';

// The channel names are repeated here on purpose: a sandboxed preload is one file with no imports
// but electron (lint and electron/preload/tsconfig.json hold it to that), and methods.ts imports zod.
// Typed as main's IPC_CHANNELS, so a name that differs does not compile.
const CHANNELS: typeof IPC_CHANNELS = { invoke: 'warden:invoke', event: 'warden:event', ready: 'warden:ready' };

const listeners = new Set<(message: EventMessage) => void>();
ipcRenderer.on(CHANNELS.event, (_event, message: EventMessage) => {
  for (const fn of listeners) fn(message);
});

const bridge: WardenBridge = {
  kind: 'electron',
  // IPC does not drop: the link is open for the life of the page.
  onLink: (fn) => {
    fn('open');
    return () => undefined;
  },
  invoke: (method, params) => ipcRenderer.invoke(CHANNELS.invoke, method, params),
  subscribe: (fn) => {
    listeners.add(fn);
    return () => void listeners.delete(fn);
  },
  ready: () => ipcRenderer.send(CHANNELS.ready),
};

contextBridge.exposeInMainWorld('warden', bridge);
