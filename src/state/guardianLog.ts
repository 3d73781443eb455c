import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { appendToRegularFile } from './regularFile';
import { PATHS, type Workspace } from './workspace';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** `.tmp/guardian/guardian.log`, one `[TIMESTAMP] [LEVEL] message` line per entry (seed 003). */
export class GuardianLog {
  constructor(private readonly ws: Workspace) {}

  async write(level: LogLevel, message: string): Promise<void> {
    const file = await this.ws.resolveForWrite(PATHS.guardianLog);
    await fs.mkdir(path.dirname(file), { recursive: true });
    // One appended write per line: O_APPEND keeps concurrent writers' lines whole.
    await appendToRegularFile(file, `[${new Date().toISOString()}] [${level}] ${message.replace(/\r?\n/g, ' ')}\n`);
  }
}
