import type { LocatedEvent } from '../core/events';
import type { EventSink } from './eventLog';

/** The most call ids kept per session, and the most sessions: old ones are forgotten first. */
const MAX_IDS = 20_000;
const MAX_SESSIONS = 1_000;

type Located = LocatedEvent;

function callId(e: Located): string | undefined {
  return e.event.type === 'tool' || e.event.type === 'tool_result' ? e.event.id : undefined;
}

/**
 * A session both the guardian's hook records (`hook-<agent>-<session>.jsonl`) and its agent's
 * transcript holds, for an agent that rejects some calls before its hook runs (`unseenInTranscript`
 * in its hook protocol: it checks a call's input first, and such a call never reaches its hook). The hook log
 * is the session's record; the transcript adds only the calls the hook never saw. Calls are paired
 * by id, each counted once from whichever source gave it first:
 * - a transcript's call is held until its result is there too (settled), then passed on only if
 *   the hook log, read again after that (`flush`), does not hold its id: the hook records a call
 *   before it runs, so a call it saw is in its log before its result is in the transcript;
 * - a hook log's call already counted from the transcript (the hook recorded it later, from the
 *   same transcript) is not passed on again;
 * - a hooked session's other transcript events (prompts, answers) are the hook log's to record.
 * Keys are `<agent id>:<session>`.
 */
export class UnseenCalls {
  /** Per session: the ids passed on from the hook log, and from the transcript. */
  private readonly fromHook = new Map<string, Set<string>>();
  private readonly fromTranscript = new Map<string, Set<string>>();
  /** A transcript's calls awaiting their result, by `<key>\0<id>`. */
  private readonly open = new Map<string, Located>();
  /** Settled transcript calls awaiting `flush`: the call, and its result when it came apart, and where they go. */
  private held: { key: string; id: string; events: Located[]; sink: EventSink }[] = [];

  /** The sessions whose settled transcript calls wait for their hook logs to be read again. */
  get waiting(): ReadonlySet<string> {
    return new Set(this.held.map((h) => h.key));
  }

  /** An event of a session's hook log: passed on, unless its call was counted from the transcript. */
  hookEvent(key: string, e: Located, sink: EventSink): void {
    const id = callId(e);
    if (id !== undefined) {
      if (this.fromTranscript.get(key)?.has(id) === true) return;
      if (e.event.type === 'tool') note(this.fromHook, key, id);
    }
    sink.event(e);
  }

  /**
   * An event of the agent's transcript. `hooked`: the hook records the session (its log exists):
   * only the calls are taken, held until settled. Otherwise it is passed on, its call's id noted
   * (a hook log that shows up later holds the same calls).
   */
  transcriptEvent(key: string, hooked: boolean, e: Located, sink: EventSink): void {
    const id = callId(e);
    if (!hooked) {
      if (id !== undefined && e.event.type === 'tool') note(this.fromTranscript, key, id);
      sink.event(e);
      return;
    }
    if (id === undefined) return;
    const slot = `${key}\u0000${id}`;
    if (e.event.type === 'tool') {
      if (e.event.ok !== undefined) this.held.push({ key, id, events: [e], sink });
      else this.open.set(slot, e);
      return;
    }
    const call = this.open.get(slot);
    if (call === undefined) return;
    this.open.delete(slot);
    this.held.push({ key, id, events: [call, e], sink });
    if (this.open.size > MAX_IDS) this.open.delete(this.open.keys().next().value as string);
  }

  /** The settled transcript calls whose ids the hook logs (read again just before) do not hold: passed on, in order. */
  flush(): void {
    const held = this.held;
    this.held = [];
    for (const h of held) {
      if (this.fromHook.get(h.key)?.has(h.id) === true || this.fromTranscript.get(h.key)?.has(h.id) === true) continue;
      note(this.fromTranscript, h.key, h.id);
      for (const e of h.events) h.sink.event(e);
    }
  }
}

function note(map: Map<string, Set<string>>, key: string, id: string): void {
  let ids = map.get(key);
  if (ids === undefined) {
    ids = new Set();
    map.set(key, ids);
    if (map.size > MAX_SESSIONS) map.delete(map.keys().next().value as string);
  }
  ids.add(id);
  if (ids.size > MAX_IDS) ids.delete(ids.values().next().value as string);
}
