// The human-readable report of a bundle: one self-contained HTML file, no script, no external fetch.
// Everything in it that came from a sandbox or an agent is untrusted text: it goes through esc()
// and is never interpreted as markup; bidi and control characters are shown, not obeyed.
import type { LedgerEntry, ReportBundle, VerifyResult } from '../../../shared/types/ledger.js';
import type { ReportSample } from '../../../shared/types/ledger-report.js';
import { renderTimeline } from './report-timeline.js';

export interface ReportOptions {
  /** Resource samples of the exported sandbox or run (the control panel's history), drawn on the timeline. */
  samples?: ReportSample[];
}

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
        `<tr id="e-${e.seq}"><td class="n">${e.seq}</td><td>${esc(e.time)}</td><td>${esc(e.actor)}</td><td>${esc(e.kind)}</td>` +
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
export function renderReportHtml(b: ReportBundle, offline: VerifyResult, opts: ReportOptions = {}): string {
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
tr:target{background:#fff3c4;outline:2px solid #d4a72c}
.muted{color:#555}
.tl{display:block;border:1px solid #ccc;background:#fff;margin:.5rem 0 1.5rem}
.tl .bg{fill:#f6f7f9;pointer-events:none}.tl .l{fill:none;stroke-width:1.3;pointer-events:none}
.tl .cpu{stroke:#1f6feb}.tl .mem{stroke:#8250df}.tl .limit{stroke:#8250df;stroke-dasharray:5 3}
.tl .rx{stroke:#1a7f37}.tl .tx{stroke:#9a6700;stroke-dasharray:5 3}.tl .pids{stroke:#57606a}
.tl .lane{stroke:#d0d7de}.tl .when{stroke:#57606a}.tl .leader{stroke:#8c959f;stroke-width:.8}.tl .tick{stroke:#eaeef2}
.tl text{font:11px system-ui,sans-serif;fill:#24292f;pointer-events:none}.tl .max{fill:#57606a;font-size:10px}.tl .t{fill:#57606a}
.tl .band{fill:transparent}.tl .band:hover{fill:rgba(31,111,235,.08)}
.m{stroke:#fff;stroke-width:1}.m.ok{fill:#1a7f37}.m.deny{fill:#cf222e}.m.ask{fill:#bf8700}.m.fail{fill:#e16f24}
.tl a.item:hover .m,.tl a.item:focus .m{stroke:#000;stroke-width:2}
.legend .key{white-space:nowrap;margin-right:1rem}.legend svg{vertical-align:-2px;margin-right:.3rem}
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
${renderTimeline(b.entries, opts.samples ?? [], esc)}
<h2>Entries by sandbox</h2>
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
