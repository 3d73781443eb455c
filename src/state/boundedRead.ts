import { constants, promises as fs } from 'node:fs';

export type BoundedRead =
  | { readonly kind: 'text'; readonly text: string; readonly truncated: boolean }
  | { readonly kind: 'missing' }
  /** There, but not readable as a file: a FIFO, a device, a folder, or an error opening it. */
  | { readonly kind: 'unreadable'; readonly problem: string };

/**
 * Reads at most `maxBytes` of a regular file, and never blocks: the file is opened non-blocking
 * and checked before any read, so a FIFO, a device or a folder in its place is reported as
 * unreadable instead of hanging the reader (the hook must decide by its deadline).
 */
export async function readRegularBounded(file: string, maxBytes: number): Promise<BoundedRead> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'unreadable', problem: `cannot open (${code ?? (err as Error).message})` };
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return { kind: 'unreadable', problem: st.isDirectory() ? 'is a folder, not a file' : 'is not a regular file (a FIFO, socket or device)' };
    const buf = Buffer.alloc(Math.min(maxBytes, Math.max(0, st.size)));
    let filled = 0;
    while (filled < buf.length) {
      const { bytesRead } = await handle.read(buf, filled, buf.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { kind: 'text', text: buf.toString('utf8', 0, filled), truncated: st.size > filled };
  } catch (err) {
    return { kind: 'unreadable', problem: `cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  } finally {
    await handle.close().catch(() => undefined);
  }
}
