import { promises as fs } from 'node:fs';

const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);

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

export type LineHandler = (text: string, line: number) => void;
export type OverlongHandler = (line: number, bytes: number) => void;

/**
 * Reads a growing log file incrementally: only the bytes appended since the last read, complete
 * lines only (a trailing partial line waits until it is finished). A file that shrank, whose inode
 * changed, or whose byte before the old end differs, was replaced: it is read again from the start.
 */
export class LogTail {
  private offset = 0;
  private line = 0;
  private pending: Buffer = EMPTY;
  private identity: string | undefined;
  private lastByte: number | undefined;
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
      handle = await fs.open(this.file, 'r');
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
      if (this.identity !== undefined && (identity !== this.identity || stat.size < this.offset || !(await this.sameTail(handle)))) {
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
        this.lastByte = buffer[bytesRead - 1];
        this.consume(buffer.subarray(0, bytesRead), onLine, onOverlong);
      }
      return { reset, bytes, missing: false };
    } finally {
      await handle.close();
    }
  }

  /** At the end of a finished file, a last line without a newline is a line too. */
  finish(onLine: LineHandler): void {
    if (this.pending.length === 0) return;
    const text = this.pending.toString('utf8');
    this.pending = EMPTY;
    this.line++;
    onLine(text.endsWith('\r') ? text.slice(0, -1) : text, this.line);
  }

  private restart(): void {
    this.offset = 0;
    this.line = 0;
    this.pending = EMPTY;
    this.identity = undefined;
    this.lastByte = undefined;
    this.overlong = 0;
  }

  /** The byte before the old end is still the one read there: the file was appended to, not rewritten. */
  private async sameTail(handle: fs.FileHandle): Promise<boolean> {
    if (this.offset === 0 || this.lastByte === undefined) return true;
    const one = Buffer.alloc(1);
    const { bytesRead } = await handle.read(one, 0, 1, this.offset - 1);
    return bytesRead === 1 && one[0] === this.lastByte;
  }

  private consume(chunk: Buffer, onLine: LineHandler, onOverlong?: OverlongHandler): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      this.line++;
      if (this.overlong > 0) {
        onOverlong?.(this.line, this.overlong + nl - start);
        this.overlong = 0;
      } else {
        let text: string;
        if (this.pending.length > 0) {
          text = Buffer.concat([this.pending, chunk.subarray(start, nl)]).toString('utf8');
          this.pending = EMPTY;
        } else {
          text = chunk.toString('utf8', start, nl);
        }
        onLine(text.endsWith('\r') ? text.slice(0, -1) : text, this.line);
      }
      start = nl + 1;
    }
    if (start >= chunk.length) return;
    if (this.overlong > 0) {
      this.overlong += chunk.length - start;
    } else if (this.pending.length + chunk.length - start > this.maxLineBytes) {
      this.overlong = this.pending.length + chunk.length - start;
      this.pending = EMPTY;
    } else {
      // Copy: the read buffer is reused for the next chunk.
      this.pending = Buffer.concat([this.pending, chunk.subarray(start)]);
    }
  }
}
