// App-wide rules for every web contents, set once before any window exists: no navigation, no new
// windows, no webviews, no permissions, no downloads but the page's own report export. The renderer displays untrusted text, so it gets nothing.
import { app, session, shell, type WebContents } from 'electron';
import { basename, join } from 'node:path';
import { isPageMadeDownload } from './download-rule.js';

export function hardenApp(isAllowedUrl: (url: string) => boolean): void {
  // Every renderer is sandboxed, whatever a window's options say.
  app.enableSandbox();
  app.on('web-contents-created', (_event, contents: WebContents) => {
    contents.on('will-navigate', (event, url) => {
      if (!isAllowedUrl(url)) event.preventDefault();
    });
    contents.on('will-redirect', (event, url) => {
      if (!isAllowedUrl(url)) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      // Links a person clicked (never ones a sandbox's output opened without a gesture) go to the
      // system browser, and only http(s).
      if (/^https?:\/\//i.test(url)) void shell.openExternal(url);
      return { action: 'deny' };
    });
  });
}

/**
 * Called once the app is ready: the default session answers every permission question with no,
 * except writing the clipboard from our own page (the terminal's Ctrl+Shift+C, which Chromium
 * allows only during a person's gesture).
 */
export function denyPermissions(isAllowedUrl: (url: string) => boolean): void {
  const ses = session.defaultSession;
  const allowed = (permission: string, origin: string) => permission === 'clipboard-sanitized-write' && isAllowedUrl(origin);
  ses.setPermissionRequestHandler((contents, permission, callback) => callback(allowed(permission, contents.getURL())));
  ses.setPermissionCheckHandler((_contents, permission, origin) => allowed(permission, origin));
  ses.setDevicePermissionHandler(() => false);
  ses.on('will-download', (event, item, contents) => {
    if (!isPageMadeDownload(item.getURL(), contents.getURL(), isAllowedUrl)) {
      event.preventDefault();
      return;
    }
    // No save path set: Electron asks the person where to save, starting in Downloads.
    item.setSaveDialogOptions({ title: 'Save audit report', defaultPath: join(app.getPath('downloads'), basename(item.getFilename())) });
  });
}
