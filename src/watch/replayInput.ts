import { closeSync, constants, open as openFd, promises as fs, readSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { AGENTS } from '../agents';
import { parseJson, stringifyJson } from '../core/json';
import { readToEnd } from './streamText';

/** The most of a pipe or stdin that replay reads. */
const MAX_STREAM_BYTES = 256 * 1024 * 1024;

/** The most files a transcript folder may hold, and the largest one read. */
const MAX_FOLDER_FILES = 100_000;
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

/**
 * A folder that is an agent's transcript (one record per file, `Agent.folderTranscript`) as one
 * JSON array, record i on line i + 1; a missing, unreadable or corrupt file is a string saying so,
 * in its place, for the reader to skip and report. Undefined when no agent's files are there.
 */
async function folderDocument(dir: string): Promise<string | undefined> {
  for (const agent of AGENTS) {
    const layout = agent.folderTranscript;
    if (layout === undefined) continue;
    const where = [dir, ...(layout.subfolder !== undefined ? [path.join(dir, layout.subfolder)] : [])];
    for (const folder of where) {
      const names = await fs.readdir(folder).catch(() => [] as string[]);
      const files = new Map<number, string>();
      for (const name of names) {
        const i = layout.index(name);
        if (i !== undefined && files.size < MAX_FOLDER_FILES) files.set(i, name);
      }
      if (files.size === 0) continue;
      const last = Math.max(...files.keys());
      const lines: string[] = [];
      for (let i = 0; i <= last; i++) {
        const name = files.get(i);
        if (name === undefined) {
          lines.push(JSON.stringify(`no file for record ${i} in ${folder}`));
          continue;
        }
        const p = path.join(folder, name);
        const text = await fs
          .stat(p)
          .then((s) => (s.isFile() && s.size <= MAX_RECORD_BYTES ? fs.readFile(p, 'utf8') : Promise.reject(new Error(s.isFile() ? `larger than ${MAX_RECORD_BYTES} bytes` : 'not a regular file'))))
          .catch((err: Error) => err);
        if (text instanceof Error) {
          lines.push(JSON.stringify(`${name}: cannot read (${text.message})`));
          continue;
        }
        const parsed = parseJson(text);
        lines.push(parsed.ok ? (stringifyJson(parsed.value) ?? JSON.stringify(`${name}: nested too deep`)) : JSON.stringify(`${name}: not JSON (${parsed.error})`));
      }
      return `[${lines.join(',\n')}]\n`;
    }
  }
  return undefined;
}

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
  if (st.isDirectory()) {
    const text = await folderDocument(abs);
    if (text === undefined) throw new Error(`${file}: is a folder, not a log (no agent's transcript folder: ${AGENTS.filter((a) => a.folderTranscript).map((a) => a.label).join(', ')} read theirs from one)`);
    return { text };
  }
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
