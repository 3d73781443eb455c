import { formatStopAll, parseStopAllBytes, type StopParse, type StopState, type StopStatus } from '../core/stopAll';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { readRegularBytesSync } from './regularFile';
import { PATHS, type Workspace } from './workspace';

export interface StopAllRead {
  /** The status in force: a garbled file is reported and, so that a broken file never bricks agents, read as CLEAR. */
  readonly state: StopState;
  readonly parse: StopParse;
  readonly exists: boolean;
}

/** The most of STOP_ALL that is read: its status is on line 1, and a reason of any length is cut. */
const STOP_ALL_READ_BYTES = 64 * 1024;

/**
 * Reads STOP_ALL at an absolute path, bounded, at once and without ever blocking: a FIFO, device
 * or folder in its place (or a link to one: a committed link to `/dev/zero`) is unreadable,
 * reported, and read as CLEAR like a garbled file, as the fallback without the guardian reads it
 * (it reads only a regular file, `[ -f ]`). The hook reads it first thing, on every call (a file
 * of a few lines); its bytes as they are, so that a UTF-16 file reads as its text.
 */
export function readStopAllAtSync(file: string): StopAllRead {
  const read = readRegularBytesSync(file, STOP_ALL_READ_BYTES);
  if (read.kind === 'unreadable') return { state: { status: 'CLEAR' }, parse: { ok: false, error: `unreadable: ${read.problem}` }, exists: true };
  const bytes = read.kind === 'bytes' ? read.bytes : undefined;
  const parse = parseStopAllBytes(bytes);
  return { state: parse.ok ? parse.state : { status: 'CLEAR' }, parse, exists: bytes !== undefined };
}

const STRENGTH: Readonly<Record<StopStatus, number>> = { CLEAR: 0, PAUSE: 1, STOP: 2 };

/**
 * STOP_ALL as it holds for an agent of the project `root`: the project's own, unless a STOP_ALL in
 * a folder above it says more (STOP over PAUSE over CLEAR). A STOP written at the top of a
 * repository so reaches an agent whose project is a folder or a nested repository inside it. `at`
 * is the folder whose file is in force. Only files that exist are read (one open a folder).
 */
export function readStopAllInForceSync(root: string): StopAllRead & { readonly at: string } {
  let dir = resolvePath(root);
  let inForce = { ...readStopAllAtSync(join(dir, PATHS.stopAll)), at: dir };
  for (let i = 0; i < 64 && inForce.state.status !== 'STOP'; i++) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
    const read = readStopAllAtSync(join(dir, PATHS.stopAll));
    if (STRENGTH[read.state.status] > STRENGTH[inForce.state.status]) inForce = { ...read, at: dir };
  }
  return inForce;
}

/** Seed 002's circuit-breaker file `.github/guardian/STOP_ALL`. */
export class StopAllFile {
  constructor(private readonly ws: Workspace) {}

  get relativePath(): string {
    return PATHS.stopAll;
  }

  async read(): Promise<StopAllRead> {
    return readStopAllAtSync(this.ws.path(PATHS.stopAll));
  }

  async write(status: StopStatus, reason?: string, by = 'loop-guardian'): Promise<StopState> {
    const state: StopState = { status, timestamp: new Date().toISOString(), ...(reason ? { reason } : {}), by };
    await this.ws.writeAtomic(PATHS.stopAll, formatStopAll(state));
    return state;
  }
}
