import { constants, promises as fs, type Stats } from 'node:fs';

/** A log path that is a FIFO, a device, a socket or a folder: never read (a read could block for ever). */
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
