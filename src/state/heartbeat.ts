import { openRegularFile, openRegularFileSync, readTailLines, readTailTextSync, tailLines } from './regularFile';
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

/*
 * Refusals handed over to a later hook event of the same call (an agent that ends a run only from
 * its permission request, which it sends only for calls that need a permission): each handover is
 * recorded, and when the call's after-call event comes instead (it ran: the agent did not ask), the
 * handover failed, and the session's later refusals are given at once, before the call. So at most
 * one call of a session can run past a refusal that was handed over, and only where the agent
 * skipped its permission request.
 */
export const HANDOVERS = `${PATHS.guardianDir}/handovers.jsonl`;

interface Handover {
  readonly agent: string;
  readonly session: string;
  readonly tool: string;
  /** `pending`: handed over; `done`: the permission request refused it; `failed`: the call ran instead. */
  readonly state: 'pending' | 'done' | 'failed';
}

function handovers(ws: Workspace): Handover[] {
  let lines: string[];
  try {
    // Non-blocking and regular files only, as the hook reads its session log.
    const tail = readTailTextSync(openRegularFileSync(ws.path(HANDOVERS), HANDOVERS), TAIL_BYTES);
    lines = tailLines(tail.text, tail.start);
  } catch {
    return [];
  }
  return lines.flatMap((l) => {
    try {
      const v = JSON.parse(l) as Partial<Handover>;
      return typeof v.agent === 'string' && typeof v.session === 'string' && typeof v.tool === 'string' && (v.state === 'pending' || v.state === 'done' || v.state === 'failed') ? [v as Handover] : [];
    } catch {
      return [];
    }
  });
}

/** A refusal handed over to the call's permission request (`pending`), or refused there (`done`). */
export function recordHandover(ws: Workspace, agent: string, session: string, tool: string, state: 'pending' | 'done' = 'pending'): void {
  ws.appendSync(HANDOVERS, `${JSON.stringify({ ts: new Date().toISOString(), agent, session, tool, state })}\n`, { rotateOver: MAX_BYTES });
}

/** Whether a handover in this session has failed (a handed-over call ran): refusals are then given at once. */
export function handoverFailed(ws: Workspace, agent: string, session: string): boolean {
  return handovers(ws).some((h) => h.agent === agent && h.session === session && h.state === 'failed');
}

/**
 * After a call: when the session's latest handover, for this tool, is still pending, the call ran
 * without the permission request that was to refuse it. Marked failed; true when it was.
 */
export function settleHandover(ws: Workspace, agent: string, session: string, tool: string): boolean {
  const last = handovers(ws).filter((h) => h.agent === agent && h.session === session).at(-1);
  if (last === undefined || last.state !== 'pending' || last.tool !== tool) return false;
  ws.appendSync(HANDOVERS, `${JSON.stringify({ ts: new Date().toISOString(), agent, session, tool, state: 'failed' })}\n`, { rotateOver: MAX_BYTES });
  return true;
}
