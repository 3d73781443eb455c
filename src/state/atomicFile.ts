/*
 * Every write of the guardian's own files goes through here: `writeFileAtomic` (temp file +
 * rename) and `withFileLock` (an exclusive `<file>.lock` shared by every process).
 *
 * Why our own lock and not `proper-lockfile`: proper-lockfile breaks a stale lock by removing it
 * and creating it again, which is exactly the race issue 12 describes (two waiters see the same
 * stale lock, the slower one removes the fresh lock the faster one just took); it knows nothing of
 * the holder's pid, so a lock left by a dead process still blocks everyone for its stale time; and
 * it turns `<file>.lock` into a folder, which earlier versions and the other tools reading these
 * files do not expect. `write-file-atomic` does keep modes and clean its temp file, but it cannot
 * re-check that the folder still lies inside the workspace between creating the temp file and the
 * rename, which is the other half of what we need. Both would be a dependency for ~150 lines.
 *
 * The lock:
 * - It is taken with O_EXCL and records `{pid, host, token}`; the token makes each taking unique.
 * - It is stale when its holder is dead on this host (`kill(pid, 0)` says ESRCH; a pid from another
 *   host is never trusted), or when it has not been refreshed for `staleMs` (30 s): a live holder
 *   refreshes its mtime every `staleMs / 3`, so only a holder stuck that long loses it.
 * - Removing a lock, whether its holder releases it or a waiter breaks it as stale, first takes a
 *   marker `<lock>.<id>.break` with O_EXCL, where `id` names that one taking of the lock (inode and
 *   content); under the marker it checks the lock is still that taking, and only then unlinks it.
 *   So a given lock is removed at most once, by one process, and a waiter that looked at an old
 *   lock can never remove the fresh one another waiter took since: its id differs.
 *   The one case left: a process killed in the few system calls between taking a marker and
 *   removing it leaves that lock unbreakable; waiters then time out with an error naming the files.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, promises as fs, readSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, relative, sep } from 'node:path';
import { hashText } from '../core/canonical';
import { openRegularFile, whereIs } from './regularFile';
import { isWithin, WorkspaceEscapeError } from './containment';

/** What a system error means for the person reading it. */
const WRITE_CAUSES: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exceeded',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
};

/** A write that failed for a reason outside the guardian: names the file and the real cause. */
export class FileWriteError extends Error {
  readonly code: string;
  constructor(readonly file: string, code: string, readonly cause: Error) {
    super(`cannot write ${file}: ${WRITE_CAUSES[code] ?? cause.message} (${code})`);
    this.name = 'FileWriteError';
    this.code = code;
  }
}

function describeWriteError(err: unknown, name: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  return code !== undefined && code in WRITE_CAUSES && !(err instanceof FileWriteError) ? new FileWriteError(name, code, err as Error) : err;
}

export interface WriteOptions {
  /**
   * The real (link-free) folder the file must stay in, usually the workspace root. Checked after
   * the folders are created, on the temp file once it is open (where it really is, not where its
   * path says), and on the file after the rename; a write that would land outside is undone and
   * refused with WorkspaceEscapeError.
   */
  readonly within?: string;
  /** How errors name the file; default: relative to `within`, or the path. */
  readonly name?: string;
  /** Mode of a file that does not exist yet (less the umask); a replaced file keeps its own. */
  readonly mode?: number;
}

/** The permission bits of the regular file at `file`, if there is one. */
async function modeOf(file: string): Promise<number | undefined> {
  const st = await fs.lstat(file).catch(() => undefined);
  return st?.isFile() ? st.mode & 0o7777 : undefined;
}

// Unique enough with the pid and the time (the open refuses a name that exists all the same);
// no node:crypto, which costs the hook's start-up more than all its work.
const unique = () => `${process.pid}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;

/**
 * Writes a file so that readers see the old content or the new, never a mix: temp file + rename.
 * The replaced file's mode is kept; on any failure the temp file is removed.
 */
export async function writeFileAtomic(file: string, data: string, opts: WriteOptions = {}): Promise<void> {
  const { within } = opts;
  const name = opts.name ?? (within !== undefined ? relative(within, file).split(sep).join('/') : file);
  const outside = () => new WorkspaceEscapeError(name, within ?? '/');
  try {
    const dir = dirname(file);
    await fs.mkdir(dir, { recursive: true });
    if (within !== undefined && !isWithin(within, await fs.realpath(dir))) throw outside();
    const keptMode = await modeOf(file);
    const tmp = `${file}.${unique()}.tmp`;
    // O_EXCL: never through a link at the last component, never over a file that exists.
    const handle = await fs.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, keptMode ?? opts.mode ?? 0o644);
    let done = false;
    try {
      // A folder swapped for a link since the check above: the temp file was made outside. Seen
      // before a byte is written, it is removed where it really is.
      const real = within !== undefined ? await whereIs(handle, tmp) : tmp;
      if (within !== undefined && !isWithin(within, real)) throw outside();
      if (keptMode !== undefined) await handle.chmod(keptMode);
      await handle.writeFile(data, 'utf8');
      await handle.sync();
      // Rename by the temp file's real folder: a folder swapped for a link from here on makes the
      // source path miss (ENOENT) rather than move the file elsewhere.
      const target = within !== undefined ? join(dirname(real), basename(file)) : file;
      await fs.rename(real, target);
      done = true;
      if (within !== undefined && !isWithin(within, await whereIs(handle, target))) {
        await fs.unlink(await whereIs(handle, target));
        throw outside();
      }
    } finally {
      if (!done) await fs.unlink(within !== undefined ? await whereIs(handle, tmp).catch(() => tmp) : tmp).catch(() => undefined);
      await handle.close();
    }
  } catch (err) {
    throw describeWriteError(err, name);
  }
}

export interface LockOptions {
  readonly timeoutMs?: number;
  /** A lock not refreshed for this long is left over from a crashed or stuck holder, and is broken. */
  readonly staleMs?: number;
}

export class LockTimeoutError extends Error {
  constructor(readonly lockFile: string) {
    super(`timed out waiting for the lock ${lockFile}; if no guardian command is running, delete it (and any ${basename(lockFile)}.*.break beside it)`);
    this.name = 'LockTimeoutError';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const HOST = hostname();

/** One taking of a lock, as found on disk: `id` tells it from every other taking. */
interface LockSeen {
  readonly id: string;
  readonly mtimeMs: number;
  readonly pid?: number;
  readonly host?: string;
}

/**
 * The lock as it is now. The lock's steps are synchronous: each is a few system calls on a file of
 * a few bytes (opened non-blocking, never through a link), and the hook takes a lock on every call.
 */
function lookAt(lock: string): LockSeen | undefined {
  let fd: number;
  try {
    // One open file for both: the inode and the content must be of the same taking.
    fd = openSync(lock, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const text = st.isFile() ? headText(fd, LOCK_TEXT) : '';
    const id = hashText(`${st.dev}:${st.ino}:${text}`);
    return { id, mtimeMs: st.mtimeMs, ...holderOf(text) };
  } finally {
    closeSync(fd);
  }
}

/** What of a lock's content tells one taking from another: its first characters. */
const LOCK_TEXT = 1024;

/** The first `chars` characters of an open file: no character takes more than 4 bytes, so that many are read. */
function headText(fd: number, chars: number): string {
  const buf = Buffer.alloc(chars * 4);
  let filled = 0;
  while (filled < buf.length) {
    const bytesRead = readSync(fd, buf, filled, buf.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buf.toString('utf8', 0, filled).slice(0, chars);
}

/** `{pid, host}` from a lock's content; earlier versions wrote the bare pid, on this host. */
function holderOf(text: string): { pid?: number; host?: string } {
  const bare = /^\s*(\d+)\s*$/.exec(text);
  if (bare) return { pid: Number(bare[1]), host: HOST };
  try {
    const v = JSON.parse(text) as { pid?: unknown; host?: unknown };
    return typeof v.pid === 'number' && typeof v.host === 'string' ? { pid: v.pid, host: v.host } : {};
  } catch {
    return {};
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isStale(seen: LockSeen, staleMs: number): boolean {
  if (seen.pid !== undefined && seen.host === HOST && seen.pid !== process.pid && !isAlive(seen.pid)) return true;
  return Date.now() - seen.mtimeMs > staleMs;
}

/**
 * Removes the lock if it is still the taking `id`; false when another process is removing it.
 * See the comment at the top of this file for why this cannot remove a fresh lock.
 */
function removeIfStill(lock: string, id: string): boolean {
  const marker = `${lock}.${id}.break`;
  try {
    writeFileSync(marker, `${process.pid}\n`, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    if (lookAt(lock)?.id === id) unlinkSync(lock);
    return true;
  } finally {
    try {
      unlinkSync(marker);
    } catch {
      // Removed already.
    }
  }
}

/** Takes the lock once; its id when taken, undefined when another process holds it. */
function tryTake(lock: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw err;
  }
  const text = JSON.stringify({ pid: process.pid, host: HOST, token: `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 12)}` });
  try {
    writeSync(fd, text, null, 'utf8');
    const st = fstatSync(fd);
    return hashText(`${st.dev}:${st.ino}:${text}`);
  } catch (err) {
    // A lock without its holder written (a full disk) must not stay behind.
    try {
      unlinkSync(lock);
    } catch {
      // Not there.
    }
    throw err;
  } finally {
    closeSync(fd);
  }
}

/** Runs a read-modify-write of `file` under an exclusive `<file>.lock` shared by every process. */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const lock = `${file}.lock`;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const staleMs = opts.staleMs ?? 30_000;
  let id: string | undefined;
  try {
    mkdirSync(dirname(file), { recursive: true });
    const start = Date.now();
    for (;;) {
      id = tryTake(lock);
      if (id !== undefined) break;
      const seen = lookAt(lock);
      if (seen === undefined) continue;
      if (isStale(seen, staleMs) && removeIfStill(lock, seen.id)) continue;
      if (Date.now() - start > timeoutMs) throw new LockTimeoutError(lock);
      await sleep(5 + Math.random() * 20);
    }
  } catch (err) {
    throw describeWriteError(err, lock);
  }
  // A holder that is alive and working keeps its lock fresh, however long it takes.
  const refresh = setInterval(() => {
    const now = new Date();
    fs.utimes(lock, now, now).catch(() => undefined);
  }, Math.max(10, staleMs / 3));
  refresh.unref();
  try {
    return await fn();
  } finally {
    clearInterval(refresh);
    try {
      removeIfStill(lock, id);
    } catch {
      // Left for a later waiter to break: its holder (this process) will be gone.
    }
  }
}

/** Reads a text file; undefined when it does not exist. */
export async function readTextIfExists(file: string): Promise<string | undefined> {
  let handle: fs.FileHandle;
  try {
    // Non-blocking, regular files only: a FIFO in a state file's place is an error, never a hang.
    handle = await openRegularFile(file, basename(file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
