import * as path from 'node:path';
import type { DiscoveryScope, FoundTranscript, TranscriptDiscovery, TranscriptLocator } from '../agent';
import { FirstRecordFolders } from '../firstRecord';

/*
 * Copilot CLI keeps each session in `<home>/session-state/<sessionId>/events.jsonl` (older builds:
 * `<home>/session-state/<sessionId>.jsonl`), home `$COPILOT_HOME`, else `~/.copilot`
 * (github/docs `cli-config-dir-reference.md`). The first record, `session.start`, carries
 * `context.cwd` (and `gitRoot`) in current builds; a session whose start names no folder inside
 * the workspace is not this workspace's (builds before `context` existed are not matched).
 */
class CopilotCliLocator implements TranscriptLocator {
  private readonly cwdOf = new FirstRecordFolders((first) => {
    const start = first as { type?: unknown; data?: { context?: { cwd?: unknown; gitRoot?: unknown } } } | null;
    const context = start?.type === 'session.start' ? start.data?.context : undefined;
    return typeof context?.cwd === 'string' ? context.cwd : typeof context?.gitRoot === 'string' ? context.gitRoot : null;
  });

  async find(scope: DiscoveryScope): Promise<FoundTranscript[]> {
    const { home, fs } = scope;
    const states = path.join(home, 'session-state');
    const out: FoundTranscript[] = [];
    for (const d of await fs.list(states)) {
      const file = d.isDirectory() ? path.join(states, d.name, 'events.jsonl') : d.isFile() && d.name.endsWith('.jsonl') ? path.join(states, d.name) : undefined;
      if (file === undefined || !(await fs.isNew(file))) continue;
      const cwd = await this.cwdOf.of(file, fs);
      if (cwd !== null && scope.contains(path.resolve(cwd))) out.push({ file, session: d.isDirectory() ? d.name : d.name.slice(0, -'.jsonl'.length) });
    }
    return out;
  }
}

export const copilotCliDiscovery: TranscriptDiscovery = { homeEnv: 'COPILOT_HOME', defaultHome: '~/.copilot', locator: () => new CopilotCliLocator() };
