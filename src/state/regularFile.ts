import { closeSync, constants, fstatSync, lstatSync, openSync, promises as fs, readlinkSync, readSync, realpathSync, statSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { isWithin, WorkspaceEscapeError } from './containment';

/** A path that is a FIFO, a device, a socket or a folder: never read (a read could block for ever). */
export class NotRegularFileError extends Error {
  constructor(readonly file: string, readonly kind: string) {
    super(`${file} is not a regular file (${kind}): not read`);
    this.name = 'NotRegularFileError';
  }
}

function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a folder';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a file';
}

/**
 * Opens a file for reading without ever blocking on it: O_NONBLOCK makes opening a FIFO (or a link
 * to one) return at once, and anything that is not a regular file is closed and refused.
 * `name` is how the error names the file.
 */
export async function openRegularFile(file: string, name: string = file): Promise<fs.FileHandle> {
  const handle = await fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  let st: Stats;
  try {
    st = await handle.stat();
  } catch (err) {
    await handle.close();
    throw err;
  }
  if (!st.isFile()) {
    await handle.close();
    throw new NotRegularFileError(name, kindOf(st));
  }
  return handle;
}

/**
 * `openRegularFile` for the hook, which decides in a few milliseconds and cannot wait for a worker
 * thread: the same checks, synchronously; returns the descriptor.
 */
export function openRegularFileSync(file: string, name: string = file): number {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  let st: Stats;
  try {
    st = fstatSync(fd);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  if (!st.isFile()) {
    closeSync(fd);
    throw new NotRegularFileError(name, kindOf(st));
  }
  return fd;
}

/** Refuses (NotRegularFileError) a path that is not a regular file, before anything reads it. */
export async function checkRegularFile(file: string, name: string = file): Promise<void> {
  await (await openRegularFile(file, name)).close();
}

/** Why a log could not be read, as a skipped-file reason: the kind of file, or the system's code. */
export function unreadableReason(err: unknown): string {
  if (err instanceof NotRegularFileError) return `not a regular file (${err.kind}); skipped`;
  const code = (err as NodeJS.ErrnoException).code;
  return `cannot open (${code ?? (err as Error).message}); skipped`;
}

export type BoundedRead =
  | { readonly kind: 'text'; readonly text: string; readonly truncated: boolean }
  | { readonly kind: 'missing' }
  /** There, but not readable as a file: a FIFO, a device, a folder, or an error opening it. */
  | { readonly kind: 'unreadable'; readonly problem: string };

/** What a failed opening means to a bounded read: the file is missing, or there but unreadable. */
function openFailure(err: unknown): Exclude<BoundedRead, { kind: 'text' }> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
  return { kind: 'unreadable', problem: err instanceof NotRegularFileError ? `is ${err.kind}, not a regular file` : `cannot open (${code ?? (err as Error).message})` };
}

function readFailure(err: unknown): Exclude<BoundedRead, { kind: 'text' }> {
  return { kind: 'unreadable', problem: `cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
}

/**
 * Reads at most `maxBytes` of a regular file, and never blocks nor throws: a FIFO, a device or a
 * folder in its place is reported as unreadable instead of hanging the reader (the hook must decide
 * by its deadline).
 */
export async function readRegularBounded(file: string, maxBytes: number): Promise<BoundedRead> {
  let handle: fs.FileHandle;
  try {
    handle = await openRegularFile(file);
  } catch (err) {
    return openFailure(err);
  }
  try {
    const { size } = await handle.stat();
    const buf = Buffer.alloc(Math.min(maxBytes, size));
    let filled = 0;
    while (filled < buf.length) {
      const { bytesRead } = await handle.read(buf, filled, buf.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { kind: 'text', text: buf.toString('utf8', 0, filled), truncated: size > filled };
  } catch (err) {
    return readFailure(err);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** `readRegularBounded`, synchronously: for the hook's few small files (STOP_ALL, its configuration). */
export function readRegularBoundedSync(file: string, maxBytes: number): BoundedRead {
  const read = readRegularBytesSync(file, maxBytes);
  return read.kind === 'bytes' ? { kind: 'text', text: read.bytes.toString('utf8'), truncated: read.truncated } : read;
}

/** `readRegularBoundedSync`'s bytes, undecoded (STOP_ALL, which may be UTF-16). */
export function readRegularBytesSync(file: string, maxBytes: number): { readonly kind: 'bytes'; readonly bytes: Buffer; readonly truncated: boolean } | Exclude<BoundedRead, { kind: 'text' }> {
  let fd: number;
  try {
    fd = openRegularFileSync(file);
  } catch (err) {
    return openFailure(err);
  }
  try {
    const { size } = fstatSync(fd);
    const buf = Buffer.alloc(Math.min(maxBytes, size));
    let filled = 0;
    while (filled < buf.length) {
      const bytesRead = readSync(fd, buf, filled, buf.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { kind: 'bytes', bytes: buf.subarray(0, filled), truncated: size > filled };
  } catch (err) {
    return readFailure(err);
  } finally {
    closeSync(fd);
  }
}

/** Where an open file really is now, whatever links its path went through (Linux: /proc). */
export async function whereIs(handle: fs.FileHandle, fallback: string): Promise<string> {
  try {
    return await fs.readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return join(await fs.realpath(dirname(fallback)), basename(fallback));
  }
}

function whereIsSync(fd: number, fallback: string): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return join(realpathSync.native(dirname(fallback)), basename(fallback));
  }
}

/**
 * Appends text to a regular file (created when missing) in one write, without ever blocking:
 * opening a FIFO non-blocking for writing fails at once (ENXIO) instead of waiting for a reader,
 * and anything else that is not a regular file is refused. O_APPEND keeps concurrent writers'
 * lines whole. With `within`, the file as opened (where it really is, whatever a folder swapped
 * for a link made of its path) must lie inside that folder, or nothing is written. Synchronous:
 * one line, a handful of system calls, and the hook appends on every call.
 */
export function appendToRegularFile(file: string, text: string, within?: string): void {
  let existed = true;
  if (within !== undefined) {
    try {
      lstatSync(file);
    } catch {
      existed = false;
    }
  }
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK | constants.O_NOFOLLOW, 0o644);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new NotRegularFileError(file, kindOf(st));
    if (within !== undefined) {
      const real = whereIsSync(fd, file);
      if (!isWithin(within, real)) {
        // Created outside by the swap (empty, not ours to keep): removed where it really is.
        if (!existed && st.size === 0) {
          try {
            unlinkSync(real);
          } catch {
            // Gone already.
          }
        }
        throw new WorkspaceEscapeError(relative(within, file), within);
      }
    }
    writeSync(fd, text, null, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** The lines of a tail that starts at `start`, the first left out when the read starts inside it (a piece of a record). */
export function tailLines(text: string, start: number): string[] {
  const lines = text.split('\n');
  if (start > 0) lines.shift();
  return lines;
}

/**
 * The lines of the last `maxBytes` of an open file, the first left out when the read starts inside
 * it (a piece of a record). Closes the handle.
 */
export async function readTailLines(handle: fs.FileHandle, maxBytes: number): Promise<string[]> {
  let text: string;
  let start: number;
  try {
    const { size } = await handle.stat();
    start = Math.max(0, size - maxBytes);
    const buf = Buffer.alloc(size - start);
    const { bytesRead } = await handle.read(buf, 0, buf.length, start);
    text = buf.toString('utf8', 0, bytesRead);
  } finally {
    await handle.close();
  }
  return tailLines(text, start);
}

/**
 * The last `maxBytes` of a descriptor as text, and where they start, synchronously (the hook's
 * session log; `tailLines` makes its lines). Closes it.
 */
export function readTailTextSync(fd: number, maxBytes: number): { readonly text: string; readonly start: number } {
  try {
    const { size } = fstatSync(fd);
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.alloc(size - start);
    const bytesRead = readSync(fd, buf, 0, buf.length, start);
    return { text: buf.toString('utf8', 0, bytesRead), start };
  } finally {
    closeSync(fd);
  }
}

/** A path's status, or undefined when it cannot be had (missing, unreadable). */
export function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
