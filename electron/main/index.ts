// Electron composition root: hardening first, then the engine, the IPC door and the window.
import { app, BrowserWindow } from 'electron';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { StatsHub } from '../ui-door/stats-hub.js';
import { statsHistoryFile } from '../engine/stats-history/history-store.js';
import { APP_ORIGIN, handleAppProtocol, registerAppScheme } from './app-protocol.js';
import { EngineHost } from './engine-host.js';
import { denyPermissions, hardenApp } from './hardening.js';
import { IpcDoor } from './ipc.js';
import { createMainWindow } from './window.js';

const here = fileURLToPath(new URL('.', import.meta.url));
// electron-vite serves the renderer during development; a packaged app never takes a URL from outside.
const devUrl = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined;
const devOrigin = devUrl ? new URL(devUrl).origin : null;

function isTrustedOrigin(url: string): boolean {
  try {
    const origin = new URL(url).origin;
    return origin === APP_ORIGIN || (devOrigin !== null && origin === devOrigin);
  } catch {
    return false;
  }
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  registerAppScheme();
  // Navigation within the app's own origin only (a reload); anything else is refused.
  hardenApp(isTrustedOrigin);

  const host = new EngineHost();
  const hub = new StatsHub(host, statsHistoryFile(host.home));
  let door: IpcDoor | null = null;
  let win: BrowserWindow | null = null;

  const openWindow = () => {
    win = createMainWindow({
      preload: join(here, '../preload/index.cjs'),
      url: devUrl ?? `${APP_ORIGIN}/index.html`,
      devTools: !app.isPackaged,
    });
    door?.attach(win.webContents);
    win.on('closed', () => (win = null));
  };

  app.on('second-instance', () => {
    if (win?.isMinimized()) win.restore();
    win?.focus();
  });

  void app.whenReady().then(() => {
    denyPermissions(isTrustedOrigin);
    handleAppProtocol(join(here, '../renderer'));
    door = new IpcDoor(host, hub, isTrustedOrigin);
    void host.start();
    openWindow();
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) openWindow();
    });
  });

  app.on('window-all-closed', () => app.quit());
  app.on('will-quit', () => {
    door?.close();
    hub.close();
    host.close();
  });
}
