// Kept apart from hardening.ts (which needs Electron) so the rule is tested under plain Node.

/**
 * The one kind of download the app makes: a report the ledger view built in the page (a blob: URL
 * of the app's own origin, from an app page). A link in a sandbox's output, a redirect or any
 * remote file is refused. A blob: URL's origin is its inner URL's (opaque for app://, so read here).
 */
export function isPageMadeDownload(url: string, pageUrl: string, isAllowedUrl: (url: string) => boolean): boolean {
  return url.startsWith('blob:') && isAllowedUrl(url.slice('blob:'.length)) && isAllowedUrl(pageUrl);
}
