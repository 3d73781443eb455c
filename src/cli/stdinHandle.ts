/**
 * stdin read through libuv's own pipe handle, without Node's `net` and stream modules.
 *
 * An agent that runs on Node (most of them, and every agent inside VS Code) gives its hook a UNIX
 * socket as stdin: `child_process.spawn`'s `stdio: 'pipe'` is a socket pair
 * (libuv's `uv_socketpair`). Node reads a socket only through `process.stdin`, a `net.Socket`, and
 * loading `net` with the stream machinery and reading through it was about 5 ms of the hook's own
 * work of 13 (issue 10). No public API reads a socket without them: it cannot be opened again
 * through /proc (ENXIO), a blocking `readSync` would hold the hook past its deadline when stdin
 * never ends, and a read on libuv's thread pool would keep the process from exiting.
 *
 * What `net.Socket` itself does underneath is small: a `Pipe` handle opened on fd 0 (libuv makes
 * it non-blocking and polls it on the event loop), `readStart()`, and an `onread` callback that
 * finds the count of bytes read (or the end, or an error) in a shared `Int32Array` and the bytes in
 * the `ArrayBuffer` it is given. That is Node's internal stream contract
 * (nodejs/node lib/internal/stream_base_commons.js, `onStreamRead`; lib/net.js, `Socket` with an
 * `fd`), unchanged from Node 12 to 24 (checked here on 20.20, 21.7, 22.23, 23.11 and 24.21), reached through
 * `process.binding`, whose `pipe_wrap` and `stream_wrap` modules Node still allows.
 *
 * Because it is not public, it is used only on the Node majors it was checked on, every piece is
 * checked before a byte is read, and anything unexpected before the first read means `undefined`:
 * the caller reads `process.stdin` as before. Nothing is tried where `process.binding` would warn or
 * throw (`--pending-deprecation`, `NODE_PENDING_DEPRECATION=1`, `--throw-deprecation`, a
 * permission model), nor under Electron (run as Node: its Node is patched), nor on Windows. The
 * hook does not use it when STOP_ALL already says STOP or PAUSE: a decision that refuses never
 * depends on it. Like the stream, it reads on the event loop: a stdin that never ends holds nothing but this read,
 * and the hook's deadline still decides.
 */

import { fstatSync } from 'node:fs';

interface PipeHandle {
  open(fd: number): number;
  readStart(): number;
  readStop(): number;
  close(callback?: () => void): void;
  onread: (buffer?: ArrayBuffer) => void;
}

interface Internals {
  readonly Pipe: new (type: number) => PipeHandle;
  readonly SOCKET: number;
  /** Where each read leaves its count of bytes (or a negative libuv code) and its offset. */
  readonly state: Int32Array;
  readonly bytesOrError: number;
  readonly offset: number;
}

/**
 * libuv's end of stream, `UV_EOF`: `UV__EOF` (-4095) on every platform (libuv include/uv/errno.h).
 * A constant rather than `process.binding('uv')`, which builds an object of every error name
 * (0.2 ms of the hook's time).
 */
const UV_EOF = -4095;

type Binding = (name: string) => Record<string, unknown>;

/** Node's flags and environment that make `process.binding` warn or throw. */
function bindingWouldComplain(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const flags = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (flags.some((f) => /deprecation|permission/.test(f))) return true;
  return env.NODE_PENDING_DEPRECATION !== undefined && env.NODE_PENDING_DEPRECATION !== '' && env.NODE_PENDING_DEPRECATION !== '0';
}

/**
 * The Node majors the handle was checked on (the shapes below, and reading, ending and failing
 * through it: test/unit/cli/stdinHandle.test.ts). A later major reads through the stream until it
 * is checked too: a changed internal could abort the process (a native assertion) rather than
 * throw, which no check here would catch.
 */
const CHECKED_MAJORS: ReadonlySet<number> = new Set([20, 21, 22, 23, 24]);

/** The internals, each checked for the shape the contract above describes; undefined if any differs. */
function internals(): Internals | undefined {
  if (process.platform === 'win32' || bindingWouldComplain(process.execArgv, process.env)) return undefined;
  // Electron run as Node (the launcher's last resort: VS Code's own binary) patches Node: not checked.
  if (process.versions.electron !== undefined || !CHECKED_MAJORS.has(Number(process.versions.node.split('.')[0]))) return undefined;
  const binding = (process as unknown as { binding?: Binding }).binding;
  if (typeof binding !== 'function') return undefined;
  try {
    const pipeWrap = binding('pipe_wrap');
    const streamWrap = binding('stream_wrap');
    const Pipe = pipeWrap.Pipe;
    const constants = pipeWrap.constants as Record<string, unknown> | undefined;
    const state = streamWrap.streamBaseState;
    const { kReadBytesOrError: bytesOrError, kArrayBufferOffset: offset } = streamWrap;
    if (typeof Pipe !== 'function' || typeof (Pipe.prototype as Partial<PipeHandle>).readStart !== 'function' || typeof (Pipe.prototype as Partial<PipeHandle>).open !== 'function') return undefined;
    if (typeof constants?.SOCKET !== 'number' || !(state instanceof Int32Array)) return undefined;
    if (!isIndexIn(bytesOrError, state) || !isIndexIn(offset, state) || bytesOrError === offset) return undefined;
    return { Pipe: Pipe as Internals['Pipe'], SOCKET: constants.SOCKET, state, bytesOrError, offset };
  } catch {
    return undefined;
  }
}

function ignore(): void {}

function isIndexIn(i: unknown, a: Int32Array): i is number {
  return typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < a.length;
}

/**
 * fd 0's text to its end, at most `maxBytes` (past that, `tooLarge()` is the rejection), after
 * `head` (bytes of it read before); or undefined, with nothing read, when the handle cannot be
 * used: then the caller reads `process.stdin`.
 */
export function readStdinByHandle(maxBytes: number, tooLarge: () => Error, head?: Buffer): Promise<string> | undefined {
  // Only what the event loop can poll: libuv aborts the process when asked to poll a file or a
  // device (/dev/null stands in for a closed stdin), where net would have refused it first.
  if (!pollable(0)) return undefined;
  const node = internals();
  if (node === undefined) return undefined;
  let handle: PipeHandle;
  let opened: number;
  try {
    handle = new node.Pipe(node.SOCKET);
  } catch {
    return undefined;
  }
  try {
    opened = handle.open(0);
  } catch {
    opened = -1;
  }
  if (opened !== 0) {
    // fd 0 was not taken (closing a handle that holds no descriptor closes none): process.stdin takes over.
    closeQuietly(handle);
    return undefined;
  }
  const reading = handle;
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = head !== undefined && head.length > 0 ? [head] : [];
    let total = head?.length ?? 0;
    const end = (result: () => void) => {
      // Never null: Node asserts that it is a function (a null here aborts the process).
      reading.onread = ignore;
      closeQuietly(reading);
      result();
    };
    // Reads come on the event loop, never during `readStart`: the callback is in place before any.
    reading.onread = (buffer) => {
      const n = node.state[node.bytesOrError] as number;
      if (n > 0) {
        const at = node.state[node.offset] as number;
        if (!(buffer instanceof ArrayBuffer) || at < 0 || at + n > buffer.byteLength) {
          end(() => reject(new Error('stdin: a read gave no bytes where Node said it did')));
          return;
        }
        // Copied: whether Node hands the buffer over or reuses it is not part of the contract checked above.
        chunks.push(Buffer.from(new Uint8Array(buffer, at, n)));
        total += n;
        if (total > maxBytes) end(() => reject(tooLarge()));
      } else if (n === UV_EOF) end(() => resolve(Buffer.concat(chunks, total).toString('utf8')));
      else if (n < 0) end(() => reject(new Error(`stdin: cannot read (libuv error ${n})`)));
    };
    let started: number;
    try {
      started = reading.readStart();
    } catch {
      started = -1;
    }
    // The handle holds fd 0 now: the stream could not take it over, so this is stdin's error.
    if (started !== 0) end(() => reject(new Error(`stdin: cannot start reading (libuv error ${started})`)));
  });
}

/** Whether a descriptor is a socket or a pipe. */
function pollable(fd: number): boolean {
  try {
    const st = fstatSync(fd);
    return st.isSocket() || st.isFIFO();
  } catch {
    return false;
  }
}

/** Stops and closes a handle; closing is tidiness only (the process exits after the decision). */
function closeQuietly(handle: PipeHandle): void {
  try {
    handle.readStop();
  } catch {
    // Not reading.
  }
  try {
    handle.close();
  } catch {
    // Closed already.
  }
}
