// /v1/live frames are at most LIVE_FRAME_BYTES, whatever the message (a snapshot of thousands of
// runs, a call with a long command line): a larger message goes as consecutive `part` frames,
// {"type":"part","of":TYPE,"seq":N,"last":BOOL,"data":"…"}, whose `data` strings, joined in order,
// are the message's JSON.

export const LIVE_FRAME_BYTES = 64 * 1024;
/** Characters of JSON per part: even if every one escapes to six bytes the frame stays under the limit. */
const PART_CHARS = 8 * 1024;

export function liveFrames(type: string, payload: unknown): string[] {
  const json = JSON.stringify({ type, payload });
  if (Buffer.byteLength(json) <= LIVE_FRAME_BYTES) return [json];
  const frames: string[] = [];
  let at = 0;
  for (let seq = 0; at < json.length; seq++) {
    let end = Math.min(json.length, at + PART_CHARS);
    // Never cut between the two halves of a surrogate pair.
    const last = json.charCodeAt(end - 1);
    if (end < json.length && last >= 0xd800 && last <= 0xdbff) end--;
    frames.push(JSON.stringify({ type: 'part', of: type, seq, last: end >= json.length, data: json.slice(at, end) }));
    at = end;
  }
  return frames;
}
