import type { GuardianConfig } from '../core/config';
import type { AttemptEvent } from '../core/events';
import { EventLogReader } from '../watch/eventLog';
import { discoverFiles } from '../watch/sourceDiscovery';
import type { Workspace } from '../state/workspace';

/** Every `attempt` event of a task across the workspace's event logs, in file order. */
export async function collectAttempts(ws: Workspace, config: GuardianConfig, task: string): Promise<AttemptEvent[]> {
  const attempts: { e: AttemptEvent; order: string }[] = [];
  for (const rel of await discoverFiles(ws, config.sources.events)) {
    const reader = new EventLogReader(ws.path(rel), rel);
    const sink = {
      event: ({ event, ref }: { event: { type: string; task?: string }; ref: { line: number } }) => {
        if (event.type === 'attempt' && event.task === task) attempts.push({ e: event as AttemptEvent, order: `${rel}\u0000${String(ref.line).padStart(12, '0')}` });
      },
      skipped: () => undefined,
    };
    await reader.read(sink);
    reader.finish(sink);
  }
  // Attempts with timestamps are ordered by time; the file order breaks ties and stands in without them.
  return attempts
    .sort((a, b) => {
      const ta = a.e.ts === undefined ? NaN : Date.parse(a.e.ts);
      const tb = b.e.ts === undefined ? NaN : Date.parse(b.e.ts);
      if (!Number.isNaN(ta) && !Number.isNaN(tb) && ta !== tb) return ta - tb;
      return a.order < b.order ? -1 : a.order > b.order ? 1 : 0;
    })
    .map((a) => a.e);
}
