import { describe, expect, it } from 'vitest';
import { isPageMadeDownload } from './download-rule.js';

const appOnly = (url: string) => {
  try {
    return new URL(url).protocol === 'app:' && new URL(url).host === 'warden';
  } catch {
    return false;
  }
};

describe('which downloads the desktop app lets through', () => {
  it('lets the ledger view save the report it built in the page', () => {
    expect(isPageMadeDownload('blob:app://warden/6f1c2d3e-aaaa-bbbb-cccc-0123456789ab', 'app://warden/index.html#/ledger', appOnly)).toBe(
      true,
    );
  });

  it('refuses remote files, data: URLs, foreign blobs and downloads started by a foreign page', () => {
    expect(isPageMadeDownload('https://evil.example/payload.sh', 'app://warden/index.html', appOnly)).toBe(false);
    expect(isPageMadeDownload('data:text/plain,hi', 'app://warden/index.html', appOnly)).toBe(false);
    expect(isPageMadeDownload('blob:https://evil.example/6f1c', 'app://warden/index.html', appOnly)).toBe(false);
    expect(isPageMadeDownload('blob:app://warden/6f1c', 'https://evil.example/', appOnly)).toBe(false);
  });
});
