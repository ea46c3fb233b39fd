// The human-readable report of a bundle: one self-contained HTML file, no script, no external fetch.
// Everything in it that came from a sandbox or an agent is untrusted text: it goes through esc()
// and is never interpreted as markup; bidi and control characters are shown, not obeyed.
import type { LedgerEntry, ReportBundle, VerifyResult } from '../../../shared/types/ledger.js';

const PREVIEW_CHARS = 400;

// eslint-disable-next-line no-control-regex -- making control characters visible is the point
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function esc(text: string): string {
  return text
    .replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function preview(payload: unknown): string {
  const text = JSON.stringify(payload) ?? 'null';
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}… (${text.length} chars)` : text;
}

function verdict(v: VerifyResult): string {
  if (v.ok)
    return `<p class="ok">✔ Verified: ${v.entries} entries${v.checkpoint ? `, checkpoint of ${v.checkpoint.size} entries signed by ${esc(v.checkpoint.keyName)} (key id ${esc(v.checkpoint.keyId)})` : ''}.</p>`;
  const bad = v.firstBad ? `first bad entry ${v.firstBad.seq}: ${esc(v.firstBad.reason)}` : 'failed';
  return `<p class="bad">✘ Not verified — ${bad}.</p>`;
}

function table(entries: LedgerEntry[]): string {
  const rows = entries
    .map(
      (e) =>
        `<tr><td class="n">${e.seq}</td><td>${esc(e.time)}</td><td>${esc(e.actor)}</td><td>${esc(e.kind)}</td>` +
        `<td><code>${esc(preview(e.payload))}</code></td><td><code title="${esc(e.hash)}">${esc(e.hash.slice(0, 12))}…</code></td></tr>`,
    )
    .join('\n');
  return `<table><thead><tr><th>seq</th><th>time (UTC)</th><th>actor</th><th>kind</th><th>payload</th><th>hash</th></tr></thead><tbody>\n${rows}\n</tbody></table>`;
}

function counts(values: string[]): string {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${esc(k)} (${n})`)
    .join(', ');
}

/** `offline` is the result of verifying this very bundle (what an auditor would see). */
export function renderReportHtml(b: ReportBundle, offline: VerifyResult): string {
  const bySandbox = new Map<string, LedgerEntry[]>();
  for (const e of b.entries) {
    const key = e.sandboxId ?? '(no sandbox)';
    const list = bySandbox.get(key) ?? [];
    list.push(e);
    bySandbox.set(key, list);
  }
  const first = b.entries[0];
  const last = b.entries[b.entries.length - 1];
  const sel = b.selection;
  const timelines = [...bySandbox.entries()]
    .map(([sb, es]) => `<section><h3>Sandbox ${esc(sb)} — ${es.length} entries</h3>\n${table(es)}</section>`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="referrer" content="no-referrer">
<title>Warden audit report — ${esc(b.origin)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#111}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}
td,th{border:1px solid #ccc;padding:.25rem .4rem;vertical-align:top;text-align:left}
td.n{text-align:right}
code,pre{font:12px ui-monospace,monospace;white-space:pre-wrap;word-break:break-all}
.ok{color:#065f2c;font-weight:600}.bad{color:#a40000;font-weight:600}
dt{font-weight:600}dd{margin:0 0 .4rem 1rem}
</style>
</head>
<body>
<h1>Warden audit report</h1>
<h2>Verification</h2>
<p>This bundle, verified on its own (entry hashes, chain, inclusion proofs, signed checkpoint):</p>
${verdict(offline)}
<p>The whole ledger, as Warden verified it when exporting:</p>
${verdict(b.verification)}
<h2>Summary</h2>
<dl>
<dt>Log</dt><dd><code>${esc(b.origin)}</code></dd>
<dt>Exported</dt><dd>${esc(b.createdAt)}</dd>
<dt>Selection</dt><dd>entries ${sel.fromSeq}–${sel.toSeq}${sel.sandboxId !== null ? ` of sandbox <code>${esc(sel.sandboxId)}</code>` : ''}: ${b.entries.length} entries${first && last ? `, ${esc(first.time)} to ${esc(last.time)}` : ''}</dd>
<dt>Actors</dt><dd>${counts(b.entries.map((e) => e.actor)) || '—'}</dd>
<dt>Kinds</dt><dd>${counts(b.entries.map((e) => e.kind)) || '—'}</dd>
<dt>Checkpoint</dt><dd>${b.checkpoint.size} entries, Merkle root <code>${esc(b.checkpoint.root)}</code></dd>
<dt>Signing key</dt><dd><code>${esc(b.publicKey.vkey)}</code></dd>
</dl>
<h2>Timeline by sandbox</h2>
${timelines || '<p>No entries selected.</p>'}
<h2>How to check this report</h2>
<ol>
<li>Get the signing key (<code>${esc(b.publicKey.vkey)}</code>) from someone other than the sender of this report, and compare.</li>
<li>With Warden: <code>warden audit verify --report bundle.json --key '${esc(b.publicKey.vkey)}'</code> (add <code>--previous older.json</code> to prove this log extends an earlier report).</li>
<li>Without Warden: <code>python3 verify_bundle.py bundle.json</code> (standard library + openssl), or by hand: the checkpoint below is a C2SP signed note; check its Ed25519 signature over the text before the blank line with <code>openssl pkeyutl -verify -rawin</code> and the PEM key in the bundle; each entry hash is SHA-256 of a 0x00 byte followed by the RFC 8785 canonical JSON of the entry.</li>
</ol>
<h3>Signed checkpoint</h3>
<pre>${esc(b.checkpoint.note)}</pre>
<h3>Hash specification</h3>
<p>${esc(b.hashSpec)}</p>
</body>
</html>
`;
}
