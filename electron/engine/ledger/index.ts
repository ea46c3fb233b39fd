// The audit ledger, as the rest of Warden uses it.
export { Ledger, type LedgerOptions, type AppendInput, type InclusionProofResult, type ConsistencyProofResult } from './ledger.js';
export type { BlobRef } from './blobs.js';
export { verifyLedgerFile, verifyLedgerFileAsync, type VerifyFileOptions } from './verify-file.js';
export { verifyInclusion, verifyConsistency } from './merkle.js';
export { defaultLedgerFile, defaultKeyDir } from './paths.js';
export type { VerifyOptions } from './verify.js';
export type { CheckpointReason } from './checkpoint.js';
export { exportBundle, exportBundleAsync, HASH_SPEC, type ExportOptions } from './export.js';
export { verifyBundle, parseBundle, type BundleVerifyOptions } from './bundle-verify.js';
export { renderReportHtml } from './report-html.js';
export { LedgerReader, type VerifyProgress } from './ledger-reader.js';
export { resolveSandboxRef } from './sandbox-ref.js';
