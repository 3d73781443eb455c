import { createHash } from 'node:crypto';
import type { promises as fs } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { openRegularFile } from '../state/regularFile';

const NEWLINE = 0x0a;
/** How many of a file's first bytes identify it: a JSONL log's first line, or most of it. */
const FINGERPRINT_BYTES = 256;
/** How many of the bytes just before the read position must still be there: the end of what was read. */
const TAIL_BYTES = 64;
/**
 * The longest a read works before it lets the event loop run (the extension host's, when a folder
 * with hundreds of MB of logs opens): lines are handled in slices of about this many ms. 2, not 8
 * or 4: the event loop's p99 while 300 MB of transcripts are read 30 → 25 → 15-18.5 ms (an idle
 * loop's is 10.3: 5-8 ms added, the goal 10) at no longer a read (docs/design.md, "the other readers").
 */
const SLICE_MS = 2;
/** The most bytes of complete lines decoded at once (lines are slices of the text). */
const DECODE_BYTES = 64 << 10;
/** Lines handled between two looks at the clock. */
const LINES_PER_LOOK = 16;

export interface TailOptions {
  /** Bytes read per system call. */
  readonly chunkSize?: number;
  /** A line longer than this is skipped (and reported) instead of being held in memory. */
  readonly maxLineBytes?: number;
}

export interface TailRead {
  /** The file was replaced or shrank: lines come again from its start. */
  readonly reset: boolean;
  readonly bytes: number;
  /** The file does not exist (any more). */
  readonly missing: boolean;
}

/** A line without the `\r` of a CRLF ending. */
export function withoutCR(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

export type LineHandler = (text: string, line: number) => void;
export type OverlongHandler = (line: number, bytes: number) => void;

/**
 * Reads a growing log file incrementally: only the bytes appended since the last read, complete
 * lines only (a trailing partial line waits until it is finished). A file whose inode changed,
 * that shrank, or whose first bytes or last bytes read differ from those read before, was replaced
 * or truncated and written again (copytruncate, or a writer that rewrites its log in place with a
 * fresh first record, even when it regrew past the old end before this read): it is read again
 * from the start. A path that is not a regular file (a FIFO, a folder) is refused, never
 * opened for a blocking read (NotRegularFileError).
 */
export class LogTail {
  private offset = 0;
  private line = 0;
  /** The partial line read so far, in the pieces it came in (joined once, when it ends: a line of many chunks is not copied again at each). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private identity: string | undefined;
  /** Hash of the file's first bytes (at most FINGERPRINT_BYTES) as last read, and how many. */
  private fingerprint: string | undefined;
  private fingerprintBytes = 0;
  /** Hash of the bytes just before `offset` (at most TAIL_BYTES), as last read. */
  private tailPrint: string | undefined;
  private overlong = 0;
  private readonly chunkSize: number;
  private readonly maxLineBytes: number;

  constructor(readonly file: string, opts: TailOptions = {}) {
    this.chunkSize = opts.chunkSize ?? 1 << 20;
    this.maxLineBytes = opts.maxLineBytes ?? 16 << 20;
  }

  /** Bytes consumed so far (complete lines and the pending partial one). */
  get position(): number {
    return this.offset;
  }

  /** `onReset` runs before any line when the file is read again from its start. */
  async read(onLine: LineHandler, onOverlong?: OverlongHandler, onReset?: () => void): Promise<TailRead> {
    let handle: fs.FileHandle;
    try {
      handle = await openRegularFile(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const reset = this.offset > 0;
      this.restart();
      if (reset) onReset?.();
      return { reset, bytes: 0, missing: true };
    }
    try {
      const stat = await handle.stat();
      const identity = `${stat.dev}:${stat.ino}`;
      let reset = false;
      if (this.identity !== undefined && (identity !== this.identity || stat.size < this.offset || !(await this.sameStart(handle)) || !(await this.sameTail(handle)))) {
        this.restart();
        reset = true;
        onReset?.();
      }
      this.identity = identity;
      let bytes = 0;
      const buffer = Buffer.allocUnsafe(this.chunkSize);
      while (this.offset < stat.size) {
        const want = Math.min(this.chunkSize, stat.size - this.offset);
        const { bytesRead } = await handle.read(buffer, 0, want, this.offset);
        if (bytesRead === 0) break;
        this.offset += bytesRead;
        bytes += bytesRead;
        await this.consume(buffer.subarray(0, bytesRead), onLine, onOverlong);
      }
      if (this.fingerprintBytes < Math.min(this.offset, FINGERPRINT_BYTES)) await this.takeFingerprint(handle);
      if (bytes > 0 || reset) this.tailPrint = await this.tailHash(handle);
      return { reset, bytes, missing: false };
    } finally {
      await handle.close();
    }
  }

  /** At the end of a finished file, a last line without a newline is a line too. */
  finish(onLine: LineHandler): void {
    if (this.pendingBytes === 0) return;
    const text = Buffer.concat(this.pending).toString('utf8');
    this.clearPending();
    this.line++;
    onLine(withoutCR(text), this.line);
  }

  private restart(): void {
    this.offset = 0;
    this.line = 0;
    this.clearPending();
    this.identity = undefined;
    this.fingerprint = undefined;
    this.fingerprintBytes = 0;
    this.tailPrint = undefined;
    this.overlong = 0;
  }

  private clearPending(): void {
    this.pending = [];
    this.pendingBytes = 0;
  }

  private async firstBytes(handle: fs.FileHandle, length: number, position = 0): Promise<string | undefined> {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, position);
    return bytesRead === length ? createHash('sha1').update(buf).digest('hex') : undefined;
  }

  /** Hash of the last bytes read (those just before `offset`). */
  private async tailHash(handle: fs.FileHandle): Promise<string | undefined> {
    const length = Math.min(this.offset, TAIL_BYTES);
    return length === 0 ? undefined : this.firstBytes(handle, length, this.offset - length);
  }

  /**
   * The bytes just before the read position are still those read there: what follows is an
   * append. A file rewritten in place from a first record of the same beginning (a fresh snapshot
   * of the same session) and already longer than what was read passes the other checks.
   */
  private async sameTail(handle: fs.FileHandle): Promise<boolean> {
    if (this.tailPrint === undefined) return true;
    return (await this.tailHash(handle)) === this.tailPrint;
  }

  private async takeFingerprint(handle: fs.FileHandle): Promise<void> {
    this.fingerprintBytes = Math.min(this.offset, FINGERPRINT_BYTES);
    this.fingerprint = await this.firstBytes(handle, this.fingerprintBytes);
  }

  /** The file still starts with the bytes read there before: it was appended to, not rewritten. */
  private async sameStart(handle: fs.FileHandle): Promise<boolean> {
    if (this.fingerprint === undefined || this.fingerprintBytes === 0) return true;
    return (await this.firstBytes(handle, this.fingerprintBytes)) === this.fingerprint;
  }

  /**
   * The chunk's complete lines, in slices of SLICE_MS with the event loop let run between them.
   * Its complete lines are decoded some at once (a newline is never inside a UTF-8 sequence, so
   * the text up to one is whole) and each line is a slice of that text: one decoding per 64 KB
   * rather than one per line.
   */
  private async consume(chunk: Buffer, onLine: LineHandler, onOverlong?: OverlongHandler): Promise<void> {
    let start = 0;
    const last = chunk.lastIndexOf(NEWLINE);
    if (last >= 0 && (this.pendingBytes > 0 || this.overlong > 0)) {
      // The line begun in earlier chunks ends here.
      const nl = chunk.indexOf(NEWLINE);
      this.line++;
      if (this.overlong > 0) {
        onOverlong?.(this.line, this.overlong + nl);
        this.overlong = 0;
      } else {
        const text = Buffer.concat([...this.pending, chunk.subarray(0, nl)]).toString('utf8');
        this.clearPending();
        onLine(withoutCR(text), this.line);
      }
      start = nl + 1;
    }
    let sliceStart = performance.now();
    let n = 0;
    while (start <= last) {
      // Up to DECODE_BYTES at once, ending at a newline: a young string, not one of the large
      // objects only a full collection frees. A line longer than that is decoded alone.
      let end = start + DECODE_BYTES > last ? last : chunk.lastIndexOf(NEWLINE, start + DECODE_BYTES - 1);
      if (end < start) end = chunk.indexOf(NEWLINE, start);
      const text = chunk.toString('utf8', start, end + 1);
      for (let at = 0; at < text.length; ) {
        if (++n % LINES_PER_LOOK === 0 && performance.now() - sliceStart >= SLICE_MS) {
          await nextTurn();
          sliceStart = performance.now();
        }
        const nl = text.indexOf('\n', at);
        this.line++;
        onLine(nl > at && text.charCodeAt(nl - 1) === 13 ? text.slice(at, nl - 1) : text.slice(at, nl), this.line);
        at = nl + 1;
      }
      start = end + 1;
    }
    if (start >= chunk.length) return;
    if (this.overlong > 0) {
      this.overlong += chunk.length - start;
    } else if (this.pendingBytes + chunk.length - start > this.maxLineBytes) {
      this.overlong = this.pendingBytes + chunk.length - start;
      this.clearPending();
    } else {
      // Copy: the read buffer is reused for the next chunk.
      this.pending.push(Buffer.from(chunk.subarray(start)));
      this.pendingBytes += chunk.length - start;
    }
  }
}
