// The web shell's wire protocol between `warden serve` (electron/server/web-shell) and the page
// (renderer/src/api/web-bridge.ts): its paths, the socket's close code for "log in", the binary
// terminal frame, and the JSON messages each way. Both sides import it from here.
import type { Envelope } from '../errors.js';
import type { EventMessage } from './events.js';

/** POST {code} for a session cookie; the socket; POST to end the session. */
export const LOGIN_PATH = '/ui/login';
export const WS_PATH = '/ui/ws';
export const LOGOUT_PATH = '/ui/logout';

/** Close code for a socket without a live session (the page shows its login form). */
export const WS_UNAUTHORIZED = 4401;

/**
 * Terminal output goes as binary frames, not JSON events: [FRAME_TERMINAL_OUTPUT][id length][id,
 * ASCII][the bytes as the shell wrote them]. The page decodes the UTF-8; the server neither
 * decodes, escapes nor copies per character.
 */
export const FRAME_TERMINAL_OUTPUT = 1;
/** Bytes before the id: the tag and the id's length. */
export const TERMINAL_FRAME_HEAD = 2;

/** A terminal frame's id and bytes, or null for anything else. */
export function readTerminalFrame(bytes: Uint8Array): { id: string; data: Uint8Array } | null {
  if (bytes.length < TERMINAL_FRAME_HEAD || bytes[0] !== FRAME_TERMINAL_OUTPUT) return null;
  const head = TERMINAL_FRAME_HEAD + bytes[1]!;
  if (bytes.length < head) return null;
  return { id: String.fromCharCode(...bytes.subarray(TERMINAL_FRAME_HEAD, head)), data: bytes.subarray(head) };
}

/** The page → server: it is listening (queued events follow), or a call of the UI method map. */
export type ShellRequest = { t: 'ready' } | { t: 'call'; id: number; method: string; params: unknown };
/** The server → page: a call's answer, or an event. */
export type ShellMessage = { t: 'result'; id: number; envelope: Envelope<unknown> } | { t: 'event'; message: EventMessage };
