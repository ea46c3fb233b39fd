// The page's own SHA-256 and Ed25519 (WebCrypto), handed to the shared proof checker: the Ledger view
// checks inclusion proofs with the browser's crypto, not with anything the server computed. WebCrypto
// exists only in a secure context (https, 127.0.0.1, the desktop app); elsewhere the check says so.
import type { ProofCrypto } from '../../../../shared/ledger/entry-proof.js';

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('WebCrypto is only available on https, on 127.0.0.1 or in the desktop app');
  return s;
}

/** A copy in a plain ArrayBuffer, which every WebCrypto typing accepts. */
const buf = (b: Uint8Array): ArrayBuffer => b.slice().buffer;

export const webProofCrypto: ProofCrypto = {
  sha256: async (data) => new Uint8Array(await subtle().digest('SHA-256', buf(data))),
  ed25519Verify: async (publicKey, signature, message) => {
    let key: CryptoKey;
    try {
      key = await subtle().importKey('raw', buf(publicKey), { name: 'Ed25519' }, false, ['verify']);
    } catch (err) {
      // Not supported at all is the page's limit; a key WebCrypto refuses (not a curve point) is the key's fault.
      if ((err as DOMException).name === 'NotSupportedError') throw err;
      return false;
    }
    return subtle().verify({ name: 'Ed25519' }, key, buf(signature), buf(message));
  },
};

const PIN = 'warden.ledger.keyFingerprint';

/** The ledger key fingerprint this browser saw first (trust on first use), or undefined. */
export function pinnedKey(): string | undefined {
  try {
    return localStorage.getItem(PIN) ?? undefined;
  } catch {
    return undefined;
  }
}

export function pinKey(fingerprint: string): void {
  try {
    localStorage.setItem(PIN, fingerprint);
  } catch {
    // Storage refused (private window): every check then stands alone.
  }
}
