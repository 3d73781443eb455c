import * as path from 'node:path';
import type { JsonlAdapter } from '../agents/transcript';
import { withBase } from '../agents/eventBuilders';
import { isGuardianRefusal } from '../core/calls';
import { proseKey } from '../core/canonical';
import type { GuardianEvent } from '../core/events';
import { parseJson } from '../core/json';
import { openRegularFile, readTailLines } from '../state/regularFile';

/** How much of a transcript's end is read for the latest turn: a turn's last records fit well in it. */
export const TRANSCRIPT_TAIL_BYTES = 256 * 1024;

/** What a session's previous turn left in its transcript, beyond the tool calls a hook records itself. */
export interface PreviousTurn {
  /** Its last answer in text. */
  readonly reply?: string;
  /** Its failed model requests, delegations and what came back, in order. */
  readonly events: readonly GuardianEvent[];
}

const TURN_KINDS = new Set(['api_error', 'delegation', 'delegation_result']);

/**
 * The turn before the prompt `current`, from the end of the session's transcript (which the agent
 * names to its hook): the turn after the transcript's last prompt, or, where that prompt is
 * `current` itself already written and still unanswered, the turn before it. Empty when the end
 * holds none (the turn wrote nothing, the file lags, it is not the agent's format). Read-only,
 * bounded and non-blocking: the file is the agent's, outside the workspace.
 */
export async function previousTurn(file: string, adapter: JsonlAdapter, current: string, maxBytes = TRANSCRIPT_TAIL_BYTES): Promise<PreviousTurn> {
  const handle = await openRegularFile(file);
  const lines = await readTailLines(handle, maxBytes);
  const turns: { prompt?: string; reply?: string; events: GuardianEvent[] }[] = [{ events: [] }];
  const decoder = adapter.decoder(path.basename(file));
  const sink = {
    event: (e: GuardianEvent) => {
      const turn = turns[turns.length - 1] as (typeof turns)[number];
      if (e.type === 'prompt') turns.push({ prompt: e.text, events: [] });
      else if (e.type === 'reply') turn.reply = e.text;
      else if (TURN_KINDS.has(e.type)) turn.events.push(e);
    },
    skipped: () => undefined,
  };
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const parsed = parseJson(line);
    if (parsed.ok) decoder.record(parsed.value, i + 1, sink);
  });
  let last = turns[turns.length - 1] as (typeof turns)[number];
  const unanswered = last.reply === undefined && last.events.length === 0;
  if (unanswered && last.prompt !== undefined && proseKey(last.prompt) === proseKey(current) && turns.length > 1) last = turns[turns.length - 2] as (typeof turns)[number];
  return { ...(last.reply !== undefined ? { reply: last.reply } : {}), events: last.events };
}

/**
 * How the calls `ids` ended, as the end of the session's transcript records them: the
 * `tool_result` events of those ids (or calls that carry their own outcome), in the transcript's
 * order. For agents that tell their hook nothing of a call's outcome but write it to the
 * transcript once the hook has returned (`outcomeInTranscript`). Read-only, bounded, non-blocking.
 */
export async function transcriptResults(file: string, adapter: JsonlAdapter, ids: ReadonlySet<string>, maxBytes = TRANSCRIPT_TAIL_BYTES): Promise<GuardianEvent[]> {
  const handle = await openRegularFile(file);
  const lines = await readTailLines(handle, maxBytes);
  const decoder = adapter.decoder(path.basename(file));
  const found: GuardianEvent[] = [];
  const sink = {
    event: (e: GuardianEvent) => {
      if (e.type === 'tool_result' && ids.has(e.id)) found.push(e);
      else if (e.type === 'tool' && e.id !== undefined && ids.has(e.id) && e.ok !== undefined) found.push(e);
    },
    skipped: () => undefined,
  };
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const parsed = parseJson(line);
    if (parsed.ok) decoder.record(parsed.value, i + 1, sink);
  });
  decoder.finish(sink);
  return found;
}

/** A call the transcript holds with its outcome: the `tool` event, its outcome merged in. */
export type SettledToolEvent = Extract<GuardianEvent, { type: 'tool' }>;

/**
 * The calls of `session` at the end of its transcript that its hook never saw: settled there (the
 * call and its result are both written: a call still running may be the one the hook is being
 * asked about), their ids not among `known` (the calls the hook recorded), and not older than
 * `since` (the hook log's oldest record read: an older call's record may have left its tail), nor
 * refused by the guardian (its hook saw those).
 * Each as one `tool` event with its outcome, in the transcript's order. For agents that reject
 * some calls before their hook runs (`unseenInTranscript`). Read-only, bounded, non-blocking.
 */
export async function unseenCalls(file: string, adapter: JsonlAdapter, session: string, known: ReadonlySet<string>, since?: string, maxBytes = TRANSCRIPT_TAIL_BYTES): Promise<SettledToolEvent[]> {
  const handle = await openRegularFile(file);
  const lines = await readTailLines(handle, maxBytes);
  const decoder = adapter.decoder(path.basename(file));
  const calls = new Map<string, SettledToolEvent>();
  const settled: SettledToolEvent[] = [];
  // A call the guardian refused was seen by its hook (the refusal is the hook's own record of it).
  const take = (e: SettledToolEvent) => {
    if (e.id !== undefined && !known.has(e.id) && (since === undefined || e.ts === undefined || e.ts >= since) && !(e.ok === false && isGuardianRefusal(e.error ?? ''))) settled.push(e);
  };
  const sink = {
    event: (e: GuardianEvent) => {
      if (e.session !== undefined && e.session !== session) return;
      if (e.type === 'tool' && e.id !== undefined) {
        if (e.ok !== undefined) take(e);
        else calls.set(e.id, e);
      } else if (e.type === 'tool_result') {
        const call = calls.get(e.id);
        if (call === undefined) return;
        calls.delete(e.id);
        const { ok, error, output } = e;
        take(withBase(call, { ok, ...(error !== undefined ? { error } : {}), ...(output !== undefined ? { output } : {}) }) as SettledToolEvent);
      }
    },
    skipped: () => undefined,
  };
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const parsed = parseJson(line);
    if (parsed.ok) decoder.record(parsed.value, i + 1, sink);
  });
  return settled;
}
