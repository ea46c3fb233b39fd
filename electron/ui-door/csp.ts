// The renderer's Content-Security-Policy, sent by both doors (app:// in Electron, HTTP in the web
// shell). Scripts only from the app itself; no eval, no inline script, no frames, no plugins.
// Inline styles are allowed because xterm and uPlot size their elements with them; untrusted text
// is never parsed as HTML, and Trusted Types make any attempt to do so throw.
export const RENDERER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

export const RENDERER_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': RENDERER_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=()',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
};

export function contentTypeOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return TYPES[dot >= 0 ? path.slice(dot).toLowerCase() : ''] ?? 'application/octet-stream';
}
