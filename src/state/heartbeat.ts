import { openRegularFile, readTailLines } from './regularFile';
import { PATHS, type Workspace } from './workspace';

/*
 * The hooks' heartbeat: each hook call leaves one line (agent, session, event, time), so that a
 * hook an agent runs can be told from one it never runs (issue 24: the two look the same from the
 * outside, a hook that finds nothing and a hook that never starts). Appended, one short line, with
 * O_APPEND (concurrent hooks' lines stay whole), rotated past a small size: the newest line per
 * agent is all that is read.
 */

export const HEARTBEATS = `${PATHS.guardianDir}/heartbeats.jsonl`;
const MAX_BYTES = 256 * 1024;
const TAIL_BYTES = 64 * 1024;

export interface Heartbeat {
  /** The registry id of the agent whose hook ran. */
  readonly agent: string;
  readonly session: string;
  /** The hook event, as the agent named it. */
  readonly event: string;
  /** ISO time. */
  readonly ts: string;
}

/** Records one hook call; synchronous (the hook's own work), a few system calls. */
export function recordHeartbeat(ws: Workspace, beat: Omit<Heartbeat, 'ts'>, now: Date = new Date()): void {
  ws.appendSync(HEARTBEATS, `${JSON.stringify({ ts: now.toISOString(), ...beat })}\n`, { rotateOver: MAX_BYTES });
}

/** The newest heartbeat of each agent, from the file's end; none when it is missing or unreadable. */
export async function latestHeartbeats(ws: Workspace): Promise<Map<string, Heartbeat>> {
  const out = new Map<string, Heartbeat>();
  let lines: string[];
  try {
    lines = await readTailLines(await openRegularFile(ws.path(HEARTBEATS)), TAIL_BYTES);
  } catch {
    return out;
  }
  for (const line of lines) {
    try {
      const v = JSON.parse(line) as Partial<Heartbeat>;
      if (typeof v.agent === 'string' && typeof v.ts === 'string' && typeof v.session === 'string' && typeof v.event === 'string') out.set(v.agent, { agent: v.agent, session: v.session, event: v.event, ts: v.ts });
    } catch {
      // A torn or foreign line: skipped; the next whole line says the same.
    }
  }
  return out;
}
