import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** Writes a file so that readers see the old content or the new, never a mix: temp file + rename. */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  // Unique enough with the pid; 'wx' refuses a name that exists all the same.
  const tmp = `${file}.${process.pid}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}.tmp`;
  const handle = await fs.open(tmp, 'wx', 0o644);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

export interface LockOptions {
  readonly timeoutMs?: number;
  /** A lock file older than this is left over from a crashed writer and is broken. */
  readonly staleMs?: number;
}

export class LockTimeoutError extends Error {
  constructor(readonly lockFile: string) {
    super(`timed out waiting for the lock ${lockFile}; if no guardian command is running, delete it`);
    this.name = 'LockTimeoutError';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a read-modify-write of `file` under an exclusive `<file>.lock` shared by every process. */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const lock = `${file}.lock`;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const staleMs = opts.staleMs ?? 30_000;
  await fs.mkdir(path.dirname(file), { recursive: true });
  const start = Date.now();
  for (;;) {
    try {
      const handle = await fs.open(lock, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const stat = await fs.stat(lock).catch(() => undefined);
      if (stat && Date.now() - stat.mtimeMs > staleMs) {
        await fs.rm(lock, { force: true });
        continue;
      }
      if (Date.now() - start > timeoutMs) throw new LockTimeoutError(lock);
      await sleep(5 + Math.random() * 20);
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { force: true });
  }
}

/** Reads a text file; undefined when it does not exist. */
export async function readTextIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
