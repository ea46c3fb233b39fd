// The preload exposes ONE object, window.warden: a typed invoke over the shared method map and a
// single event subscription. No Node, no ipcRenderer, nothing else reaches the page.
import { contextBridge, ipcRenderer } from 'electron';
import type { EventMessage } from '../../shared/contracts/events.js';
import type { WardenBridge } from '../../renderer/src/api/bridge.js';

// The channel names are repeated here on purpose: a sandboxed preload is one file with no imports
// but electron, and shared/contracts/methods.ts imports zod. A spec checks they agree.
const CHANNELS = { invoke: 'warden:invoke', event: 'warden:event', ready: 'warden:ready' } as const;

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
