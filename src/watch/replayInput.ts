import { closeSync, constants, open as openFd, promises as fs, readSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { readToEnd } from './streamText';

/** The most of a pipe or stdin that replay reads. */
const MAX_STREAM_BYTES = 256 * 1024 * 1024;

/**
 * What `replay FILE` reads: a regular file as it is on disk; `-`, `/dev/stdin`, a pipe (`<(cmd)`)
 * or a FIFO as a stream to its end, through the event loop (a FIFO nothing writes to ends at once).
 */
export async function readReplayInput(file: string, cwd: string): Promise<{ file: string } | { text: string }> {
  if (file === '-') return { text: await readToEnd(process.stdin, 'stdin', MAX_STREAM_BYTES) };
  const abs = path.resolve(cwd, file);
  const st = await fs.stat(abs).catch((err: NodeJS.ErrnoException) => {
    throw new Error(err.code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot open (${err.code ?? err.message})`);
  });
  if (st.isFile()) return { file: abs };
  if (st.isDirectory()) throw new Error(`${file}: is a folder, not a log`);
  let fd: number;
  try {
    // A plain descriptor, which the socket below owns and closes.
    fd = await promisify(openFd)(abs, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    // stdin that is a socket (a parent process's pipe) cannot be opened again by name: read it as it is.
    if (abs === '/dev/stdin' || abs === '/proc/self/fd/0') return { text: await readToEnd(process.stdin, file, MAX_STREAM_BYTES) };
    throw new Error(`${file}: cannot open (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  // One read first: a FIFO that no writer ever opened reads as its end (0) here, but would never
  // wake the event loop; EAGAIN means a writer is there and has not written yet.
  const first = Buffer.alloc(64 * 1024);
  let n: number;
  try {
    n = readSync(fd, first, 0, first.length, null);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') {
      closeSync(fd);
      throw new Error(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    n = -1;
  }
  if (n === 0) {
    closeSync(fd);
    throw new Error(`${file}: nothing to read (${st.isFIFO() ? 'a FIFO that nothing wrote to' : 'empty'})`);
  }
  return { text: await readToEnd(new net.Socket({ fd, readable: true, writable: false }), file, MAX_STREAM_BYTES, n > 0 ? first.subarray(0, n) : undefined) };
}
