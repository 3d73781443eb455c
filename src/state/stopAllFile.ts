import { formatStopAll, parseStopAll, type StopParse, type StopState, type StopStatus } from '../core/stopAll';
import { readTextIfExists } from './atomicFile';
import { PATHS, type Workspace } from './workspace';

export interface StopAllRead {
  /** The status in force: a garbled file is reported and, so that a broken file never bricks agents, read as CLEAR. */
  readonly state: StopState;
  readonly parse: StopParse;
  readonly exists: boolean;
}

/** Seed 002's circuit-breaker file `.github/guardian/STOP_ALL`. */
export class StopAllFile {
  constructor(private readonly ws: Workspace) {}

  get relativePath(): string {
    return PATHS.stopAll;
  }

  async read(): Promise<StopAllRead> {
    const text = await readTextIfExists(this.ws.path(PATHS.stopAll));
    const parse = parseStopAll(text);
    return { state: parse.ok ? parse.state : { status: 'CLEAR' }, parse, exists: text !== undefined };
  }

  async write(status: StopStatus, reason?: string, by = 'loop-guardian'): Promise<StopState> {
    const state: StopState = { status, timestamp: new Date().toISOString(), ...(reason ? { reason } : {}), by };
    await this.ws.writeAtomic(PATHS.stopAll, formatStopAll(state));
    return state;
  }
}
