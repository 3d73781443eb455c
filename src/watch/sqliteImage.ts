import { promises as fs } from 'node:fs';

/*
 * A consistent, read-only image of an SQLite database that another process is writing in WAL mode
 * (as agents that keep their sessions in SQLite do: `PRAGMA journal_mode = WAL`), without opening it through
 * SQLite: a reader that opened it would take part in its locking (the `-shm` wal-index), which a
 * WebAssembly build cannot share with a native writer, and a copy of the main file alone misses
 * every transaction not yet checkpointed (a fresh session lives wholly in the `-wal` file).
 *
 * The image is the main file with the write-ahead log's committed frames applied, as SQLite's own
 * readers see it (the formats: https://www.sqlite.org/fileformat2.html, "The Write-Ahead Log"):
 * - WAL header (32 bytes): magic 0x377f0682 (checksums over little-endian words) or 0x377f0683
 *   (big-endian), version, page size, checkpoint sequence, salt-1, salt-2, checksum-1, checksum-2
 *   (over the first 24 bytes).
 * - Each frame: a 24-byte header (page number, the database size in pages after a commit — not 0
 *   only on a transaction's last frame — salt-1, salt-2, checksum-1, checksum-2) and the page. A
 *   frame is valid when its salts are the header's and its checksum, carried on from the previous
 *   frame's (the header's for the first), covers its header's first 8 bytes and its page.
 * - The frames that count are the valid ones up to the last commit frame; a frame with other salts
 *   is left from a log that was started over, and ends the log.
 * The image's header then says "rollback journal" (bytes 18 and 19 set to 1), so that it opens
 * as a plain database file.
 */

/** The largest database (main file and log together) read. */
export const MAX_DATABASE_BYTES = 1024 * 1024 * 1024;

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** The database's identity as last read: both files' size and time. */
export interface ImageSignature {
  readonly main: string;
  readonly wal: string;
}

export interface DatabaseImage {
  readonly bytes: Uint8Array;
  readonly signature: ImageSignature;
  /** Frames of the log applied (0: the main file as it is). */
  readonly frames: number;
}

function sig(st: { size: number; mtimeMs: number; ino: number } | undefined): string {
  return st === undefined ? '-' : `${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** The signature of the database's two files now, without reading them. */
export async function imageSignature(file: string): Promise<ImageSignature | undefined> {
  const main = await fs.stat(file).catch(() => undefined);
  if (main === undefined || !main.isFile()) return undefined;
  const wal = await fs.stat(`${file}-wal`).catch(() => undefined);
  return { main: sig(main), wal: sig(wal?.isFile() === true ? wal : undefined) };
}

export function sameSignature(a: ImageSignature | undefined, b: ImageSignature | undefined): boolean {
  return a !== undefined && b !== undefined && a.main === b.main && a.wal === b.wal;
}

/** SQLite's WAL checksum over `data` (a multiple of 8 bytes), carried on from `s`. */
function checksum(data: Uint8Array, bigEndian: boolean, s: [number, number]): [number, number] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let s0 = s[0];
  let s1 = s[1];
  for (let i = 0; i + 8 <= data.byteLength; i += 8) {
    s0 = (s0 + view.getUint32(i, !bigEndian) + s1) >>> 0;
    s1 = (s1 + view.getUint32(i + 4, !bigEndian) + s0) >>> 0;
  }
  return [s0, s1];
}

/** The page size a database header records (bytes 16-17; 1 means 65536). */
function headerPageSize(main: Uint8Array): number | undefined {
  if (main.byteLength < 100) return undefined;
  const v = (main[16]! << 8) | main[17]!;
  return v === 1 ? 65536 : v >= 512 && (v & (v - 1)) === 0 ? v : undefined;
}

const MAGIC = 'SQLite format 3\0';

/** Whether the bytes begin as an SQLite database does. */
export function isSqliteHeader(head: Uint8Array): boolean {
  if (head.byteLength < MAGIC.length) return false;
  for (let i = 0; i < MAGIC.length; i++) if (head[i] !== MAGIC.charCodeAt(i)) return false;
  return true;
}

/**
 * The database as its committed transactions left it: `main` with the committed frames of `wal`
 * (undefined or empty: none) applied. Throws when `main` is not an SQLite database.
 */
export function applyWal(main: Uint8Array, wal: Uint8Array | undefined, name = 'the database'): { bytes: Uint8Array; frames: number } {
  // A database the writer has only just created may be all in its log, its main file still empty.
  if (main.byteLength > 0 && !isSqliteHeader(main)) throw new Error(`${name}: not an SQLite database`);
  const frames = wal !== undefined ? committedFrames(wal) : undefined;
  if (frames === undefined || frames.pages.size === 0) {
    if (main.byteLength === 0) throw new Error(`${name}: empty, and no committed transaction in its log`);
    return { bytes: rollbackHeader(main.slice()), frames: 0 };
  }
  const pageSize = frames.pageSize;
  const mainPageSize = headerPageSize(main);
  if (main.byteLength > 0 && mainPageSize !== undefined && mainPageSize !== pageSize) throw new Error(`${name}: its log's page size (${pageSize}) is not the database's (${mainPageSize})`);
  const bytes = new Uint8Array(frames.dbPages * pageSize);
  bytes.set(main.subarray(0, Math.min(main.byteLength, bytes.byteLength)));
  for (const [page, offset] of frames.pages) {
    if (page > frames.dbPages) continue;
    bytes.set(wal!.subarray(offset, offset + pageSize), (page - 1) * pageSize);
  }
  if (!isSqliteHeader(bytes)) throw new Error(`${name}: its first page is not an SQLite header after its log was applied`);
  return { bytes: rollbackHeader(bytes), frames: frames.count };
}

function rollbackHeader(bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength >= 20) {
    bytes[18] = 1;
    bytes[19] = 1;
  }
  return bytes;
}

/** The log's committed frames: for each page its last committed frame's page offset; undefined when the log is not one. */
function committedFrames(wal: Uint8Array): { pageSize: number; dbPages: number; count: number; pages: Map<number, number> } | undefined {
  if (wal.byteLength < WAL_HEADER) return undefined;
  const view = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const magic = view.getUint32(0, false);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return undefined;
  const bigEndian = magic === 0x377f0683;
  const pageSize = view.getUint32(8, false) === 1 ? 65536 : view.getUint32(8, false);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  const salt1 = view.getUint32(16, false);
  const salt2 = view.getUint32(20, false);
  let s = checksum(wal.subarray(0, 24), bigEndian, [0, 0]);
  if (s[0] !== view.getUint32(24, false) || s[1] !== view.getUint32(28, false)) return undefined;
  const committed = new Map<number, number>();
  const pending = new Map<number, number>();
  let dbPages = 0;
  let count = 0;
  let n = 0;
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.byteLength; at += FRAME_HEADER + pageSize) {
    if (view.getUint32(at + 8, false) !== salt1 || view.getUint32(at + 12, false) !== salt2) break;
    s = checksum(wal.subarray(at, at + 8), bigEndian, s);
    s = checksum(wal.subarray(at + FRAME_HEADER, at + FRAME_HEADER + pageSize), bigEndian, s);
    if (s[0] !== view.getUint32(at + 16, false) || s[1] !== view.getUint32(at + 20, false)) break;
    const page = view.getUint32(at, false);
    if (page === 0) break;
    pending.set(page, at + FRAME_HEADER);
    n++;
    const commit = view.getUint32(at + 4, false);
    if (commit !== 0) {
      for (const [p, o] of pending) committed.set(p, o);
      pending.clear();
      dbPages = commit;
      count = n;
    }
  }
  return { pageSize, dbPages, count, pages: committed };
}

async function readBounded(file: string, max: number): Promise<Uint8Array | undefined> {
  const handle = await fs.open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (handle === undefined) return undefined;
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`${file}: not a regular file`);
    if (st.size > max) throw new Error(`${file}: ${st.size} bytes, more than the ${max} a database may have to be read`);
    return new Uint8Array(await handle.readFile());
  } finally {
    await handle.close();
  }
}

/**
 * Reads the database and its log into an image. The log is read before and after the main file:
 * a checkpoint that started the log over in between would pair an old main file with a new log,
 * so the reading is tried again (three times at most, then it throws: the next poll tries again).
 */
export async function readDatabaseImage(file: string, known?: ImageSignature): Promise<DatabaseImage> {
  for (let attempt = 0; attempt < 3; attempt++) {
    // The signature the caller just took stands for the first attempt's "before".
    const before = attempt === 0 && known !== undefined ? known : await imageSignature(file);
    if (before === undefined) throw Object.assign(new Error(`${file}: no such database`), { code: 'ENOENT' });
    const walHead = await readHead(`${file}-wal`);
    const main = await readBounded(file, MAX_DATABASE_BYTES);
    if (main === undefined) throw Object.assign(new Error(`${file}: no such database`), { code: 'ENOENT' });
    const wal = await readBounded(`${file}-wal`, MAX_DATABASE_BYTES - main.byteLength);
    const after = await imageSignature(file);
    if (!sameSignature(before, after) || !sameHead(walHead, wal)) continue;
    const { bytes, frames } = applyWal(main, wal, file);
    return { bytes, signature: before, frames };
  }
  throw new Error(`${file}: changed while it was read, three times over; read again at the next change`);
}

async function readHead(file: string): Promise<Uint8Array | undefined> {
  const handle = await fs.open(file, 'r').catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const buf = new Uint8Array(WAL_HEADER);
    const { bytesRead } = await handle.read(buf, 0, WAL_HEADER, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function sameHead(head: Uint8Array | undefined, wal: Uint8Array | undefined): boolean {
  const a = head ?? new Uint8Array(0);
  const b = wal ?? new Uint8Array(0);
  if (a.byteLength !== Math.min(WAL_HEADER, b.byteLength)) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
