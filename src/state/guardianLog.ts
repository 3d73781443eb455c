import { PATHS, type Workspace } from './workspace';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** `.tmp/guardian/guardian.log`, one `[TIMESTAMP] [LEVEL] message` line per entry (seed 003). */
export class GuardianLog {
  constructor(private readonly ws: Workspace) {}

  async write(level: LogLevel, message: string): Promise<void> {
    // One appended write per line: O_APPEND keeps concurrent writers' lines whole.
    await this.ws.append(PATHS.guardianLog, `[${new Date().toISOString()}] [${level}] ${message.replace(/\r?\n/g, ' ')}\n`);
  }

  /**
   * Writes the entry, or says why it could not: for commands whose effect is already on disk,
   * where a log that cannot be written is worth a warning, not a failure.
   */
  async tryWrite(level: LogLevel, message: string): Promise<string | undefined> {
    try {
      await this.write(level, message);
      return undefined;
    } catch (err) {
      return `the guardian log (${PATHS.guardianLog}) could not be written: ${(err as Error).message}`;
    }
  }
}
