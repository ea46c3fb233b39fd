// The one window. Its web preferences are the hardened set, spelled out even where they are
// Electron's defaults, so a reader (and a future default change) cannot get them wrong.
import { BrowserWindow } from 'electron';

export interface WindowOptions {
  preload: string;
  url: string;
  devTools: boolean;
}

export function createMainWindow(options: WindowOptions): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 960,
    minHeight: 600,
    show: false,
    title: 'Warden',
    backgroundColor: '#0f1115',
    autoHideMenuBar: true,
    webPreferences: {
      preload: options.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
      devTools: options.devTools,
    },
  });
  win.once('ready-to-show', () => win.show());
  void win.loadURL(options.url);
  return win;
}
