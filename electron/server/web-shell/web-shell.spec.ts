import { describe, expect, it } from 'vitest';
import { WebShellLogin, readCookie, sessionCookie } from './login.js';
import { hostsOfAddress, hostAllowed, originAllowed } from './origin-check.js';
import { parseUiRequest } from '../../ui-door/ui-session.js';

describe('web shell login', () => {
  it('takes a code once, the UI token many times, and nothing else', () => {
    const login = new WebShellLogin('t'.repeat(43));
    const code = login.issueCode();
    const session = login.exchange(code);
    expect(session).toBeTruthy();
    expect(login.exchange(code)).toBeNull();
    expect(login.exchange('t'.repeat(43))).toBeTruthy();
    expect(login.exchange('nope')).toBeNull();
    expect(login.check(`a=b; ${sessionCookie(session!).split(';')[0]}`)).toBe(true);
    expect(login.check('warden_ui=forged')).toBe(false);
    expect(sessionCookie('x')).toMatch(/HttpOnly; SameSite=Strict/);
    expect(readCookie('a=1; b=2', 'b')).toBe('2');
  });
});

describe('host and origin', () => {
  it('answers only to its own loopback address and origin', () => {
    const hosts = hostsOfAddress({ address: '127.0.0.1', family: 'IPv4', port: 4000 });
    expect(hostAllowed(hosts, '127.0.0.1:4000')).toBe(true);
    expect(hostAllowed(hosts, 'localhost:4000')).toBe(true);
    expect(hostAllowed(hosts, 'evil.example:4000')).toBe(false);
    expect(originAllowed('127.0.0.1:4000', 'http://127.0.0.1:4000')).toBe(true);
    expect(originAllowed('127.0.0.1:4000', 'http://evil.example')).toBe(false);
  });
});

describe('UI requests', () => {
  it('are validated with the shared schemas, naming the field', () => {
    expect(parseUiRequest('terminal.resize', { id: 'a', size: { cols: 80, rows: 24 } }).method).toBe('terminal.resize');
    expect(() => parseUiRequest('sandbox.create', { memory: '12q' })).toThrow(/memory/);
    expect(() => parseUiRequest('terminal.input', { id: 'a', data: 5 })).toThrow(/data/);
    expect(() => parseUiRequest('shell.exec', {})).toThrow(/unknown method/);
  });
});
