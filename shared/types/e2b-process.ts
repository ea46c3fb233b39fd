// envd's process.Process messages for a command already running (the e2b SDK's commands.connect,
// sendStdin, closeStdin and sandbox.pty's sendInput and resize), in the protobuf JSON mapping the SDK
// sends: a oneof is the field of its case ({pid} or {tag}; {stdin} or {pty}), bytes are base64.
import { z } from 'zod';
import { ProcessSelectorSchema, PtySchema } from './e2b.js';

/** Protobuf JSON bytes: standard or URL-safe base64, padded or not. */
const Base64Schema = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'bytes are base64');

export const ProcessConnectRequestSchema = z.object({ process: ProcessSelectorSchema });
export const ProcessCloseStdinRequestSchema = z.object({ process: ProcessSelectorSchema });
export const ProcessSendInputRequestSchema = z.object({
  process: ProcessSelectorSchema,
  input: z.union([z.object({ stdin: Base64Schema }).strict(), z.object({ pty: Base64Schema }).strict()]),
});
export const ProcessUpdateRequestSchema = z.object({ process: ProcessSelectorSchema, pty: PtySchema.nullish() });
