// The wire protocol between Warden and its runner inside each sandbox (resources/runner/), written
// once here and mirrored in the runner's header comment (resources/runner/runner.h): keep the two
// identical. The runner is untrusted (agent code runs beside it), so the host reads every frame
// against these limits and layouts and declares the runner lost at the first thing out of place.
import { z } from 'zod';

/** Bumped on any change to the layouts below; the runner announces its own in READY. */
export const RUNNER_PROTOCOL_VERSION = 3;

/** Where the host's runner binary is bind-mounted (read-only) in every sandbox Warden creates. */
export const RUNNER_MOUNT_PATH = '/.warden/runner';

/**
 * Every frame: u32 payload length (big-endian, at most RUNNER_MAX_PAYLOAD) | u8 type | u32 call id
 * (big-endian; 0 is the channel itself) | payload. In payloads integers are big-endian and a `str`
 * is a u32 length and its bytes.
 */
export const RUNNER_HEADER_BYTES = 9;
export const RUNNER_MAX_PAYLOAD = 1 << 20;

/** Host → runner. */
export const HostFrame = {
  /**
   * u32 window | u8 flags (1: stdin frames follow; 2: a terminal, on a pseudo-terminal the runner
   * opens: input and output are the terminal's) | u16 argc | u16 envc | str cwd | str user | argv… | "NAME=value"…
   */
  exec: 0x01,
  /** Stdin bytes of an EXEC, or the data of a WRITE; empty = end of input. */
  stdin: 0x02,
  /**
   * (empty) kill the call's whole process tree. With id 0: kill every call's and exit: how the host
   * lets a runner go (closing its stdin instead would leave Podman's exec session behind).
   */
  kill: 0x03,
  /** u32 bytes of output the host took: the runner may send that much more for the call. */
  credit: 0x04,
  /** u32 limit | u16 n | n × str component */
  read: 0x05,
  /** u32 size | u16 n | n × str component; then exactly size bytes in STDIN frames and an empty one. */
  write: 0x06,
  /** u32 limit (entries) | u16 n | n × str component */
  list: 0x07,
  /** u16 cols | u16 rows: a terminal's size. */
  resize: 0x08,
  /** (id 0, empty) answered at once with PONG: while calls are in flight, a runner that stops answering is lost. */
  ping: 0x09,
} as const;

/** Runner → host. */
export const RunnerFrame = {
  /** (id 0) u32 protocol version | u32 the runner's pid in the sandbox. */
  ready: 0x80,
  /** Stdout of an EXEC (within credit), or the result bytes of a READ or LIST. */
  stdout: 0x81,
  /** Stderr of an EXEC (within credit). */
  stderr: 0x82,
  /** u8 how | u8 code or signal | u8 killed | u8 0 | u64 cgroup oom_kill count | str message. */
  exit: 0x83,
  /** (empty) a READ, WRITE or LIST succeeded. */
  done: 0x84,
  /** str code | str message: a READ, WRITE or LIST was refused. */
  fail: 0x85,
  /** (id 0) str message: the runner gives up and exits. */
  fatal: 0x86,
  /** (id 0, empty) the answer to a PING. */
  pong: 0x87,
  /**
   * u32 bytes | u8 closed: that much of an EXEC's stdin left the runner (written into the command's
   * stdin, or dropped because it is closed: then `closed` is 1); a host streaming stdin keeps at
   * most RUNNER_STDIN_WINDOW unacknowledged.
   */
  stdinCredit: 0x8a,
} as const;

/** EXIT's `how`. */
export const ExitHow = {
  exited: 0,
  signaled: 1,
  /** Nothing ran (the user or cwd could not be taken): the host runs the call the plain way. */
  notStarted: 2,
} as const;

export const EXIT_FIXED_BYTES = 16;

/** LIST entry: u8 type | u32 mode | u64 size | i64 mtime s | u32 mtime ns | str name. */
export const LIST_ENTRY_FIXED_BYTES = 29;
export const LIST_ENTRY_TYPES = ['file', 'dir', 'symlink', 'other'] as const;

/** The only codes a FAIL may carry (the file API's refusals); any other is a lie and loses the runner. */
export const RunnerFailSchema = z.object({
  code: z.enum(['E_NOT_FOUND', 'E_BAD_INPUT', 'E_POLICY_DENIED', 'E_TOO_LARGE']),
  message: z.string().min(1).max(8192),
});
export type RunnerFail = z.infer<typeof RunnerFailSchema>;

/** Output credit granted with an EXEC, and granted again as the consumer takes it. */
export const RUNNER_EXEC_WINDOW = 1 << 20;

/** Stdin a host streaming it may have sent that the runner has not acknowledged (STDIN_CREDIT). */
export const RUNNER_STDIN_WINDOW = 256 * 1024;

/**
 * `warden-runner egress-relay PORT SOCKET [--hand-over]`: the way out of an `egress` sandbox
 * (resources/runner/relay.c). No frames: it listens on 127.0.0.1:PORT in the sandbox and joins each
 * connection to a new one on SOCKET, the Unix socket Warden's egress proxy listens on, in a host
 * directory mounted read-only at EGRESS_MOUNT_PATH (egress/egress-dir.ts); with --hand-over it can
 * give a connection itself to the egress pump when Warden asks (egress/hand-over.ts). Started by an
 * exec that returns once it listens; it forks a daemon that outlives the Warden process that started it.
 */
/** Where programs in an `egress` sandbox find the proxy (HTTP_PROXY): the relay's port in the sandbox's own loopback. */
export const EGRESS_PROXY_PORT = 3128;

/** Where an `egress` sandbox sees its host directory (read-only), and the one socket in it. */
export const EGRESS_MOUNT_PATH = '/.warden/egress';
export const EGRESS_SOCKET_NAME = 'proxy.sock';
