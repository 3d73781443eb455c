import type { GuardianConfig } from '../core/config';
import type { GuardianEvent } from '../core/events';
import { boundedArgs, boundedText, boundedValue } from '../core/redact';
import type { StopState } from '../core/stopAll';
import type { GateVerdict } from '../core/verdict';
import type { HookCall } from '../agents/hook';
import type { HookedAgent } from '../agents/hooks';
import { appendEvent, readHookTail } from '../state/hookLog';
import { openRegularFileSync, readTailTextSync } from '../state/regularFile';
import type { Workspace } from '../state/workspace';
import type { PreviousTurn } from '../watch/transcriptTail';
import { safely, withTimeout } from './bounded';
import { gateModule, turnModule } from './modules';

/*
 * What the hook reads from the agent's own transcript, where the agent hands it its path: the
 * previous turn before a prompt, the outcomes of calls the agent writes only there, and calls the
 * agent rejected before any hook ran. Each within a budget; a transcript that cannot be read in
 * time changes nothing.
 */

/** How much of a transcript's end is looked through for calls the hook never saw (as `unseenCalls` reads it). */
const TRANSCRIPT_TAIL_BYTES = 256 * 1024;
/** How long reading the agent's transcript for the previous turn may take. */
const TRANSCRIPT_BUDGET_MS = 500;
/** What a previous turn's record in the hook log holds beyond the calls: any of them, and it is recorded. */
const TURN_RECORDED = new Set(['reply', 'api_error', 'delegation', 'delegation_result']);

/**
 * Before a prompt: what the previous turn left in the agent's transcript (where stdin names it) is
 * recorded first, once: its last answer, so that the gate compares answers, and its failed model
 * requests and delegations, which the hook sees no other way (and which, the session being
 * recorded here, are not read from the transcript). Then the gate's verdict, and the prompt
 * recorded (refused or not: sending it again goes on counting).
 */
export async function beforePrompt(agent: HookedAgent, ws: Workspace, rel: string, call: HookCall & { prompt: string }, stop: StopState, config: GuardianConfig): Promise<GateVerdict> {
  let history = readHookTail(ws.path(rel), rel);
  const ts = new Date().toISOString();
  const base = { v: 1 as const, ts, session: call.session, agent: agent.eventAgent };
  const lastPrompt = history.map((e) => e.event.type).lastIndexOf('prompt');
  const recorded = lastPrompt >= 0 && history.slice(lastPrompt + 1).some((e) => TURN_RECORDED.has(e.event.type));
  const { jsonlTranscript, previousTurn } = turnModule();
  const adapter = jsonlTranscript(agent.id);
  if (lastPrompt >= 0 && !recorded && call.transcript !== undefined && adapter !== undefined) {
    const turn = await withTimeout<PreviousTurn>(previousTurn(call.transcript, adapter, call.prompt), TRANSCRIPT_BUDGET_MS, { events: [] });
    for (const e of turn.events) appendEvent(ws, rel, { ...e, session: call.session, agent: agent.eventAgent } as GuardianEvent);
    if (turn.reply !== undefined) appendEvent(ws, rel, { ...base, type: 'reply', text: boundedText(turn.reply) });
    if (turn.reply !== undefined || turn.events.length > 0) history = readHookTail(ws.path(rel), rel);
  }
  const text = boundedText(call.prompt);
  const verdict = gateModule().promptGate({ history, prompt: { text, session: call.session, agent: base.agent, ts }, stop, config });
  appendEvent(ws, rel, { ...base, type: 'prompt', text });
  return verdict;
}

/** How long reading the agent's transcript for calls' outcomes may take. */
const SETTLE_BUDGET_MS = 500;

/**
 * Records how the session's recorded calls that have no outcome yet ended, from the end of the
 * agent's transcript (an agent whose protocol has `outcomeInTranscript` writes a call's output, with its exit code, only once its hook has
 * returned): their results are appended in the transcript's order, before the call being judged.
 * Calls the transcript does not show yet stay open; a transcript that cannot be read changes nothing.
 */
export async function settleFromTranscript(agent: HookedAgent, ws: Workspace, rel: string, transcript: string): Promise<void> {
  const history = readHookTail(ws.path(rel), rel);
  const answered = new Set(history.flatMap((e) => (e.event.type === 'tool_result' ? [e.event.id] : [])));
  const open = new Set(history.flatMap((e) => (e.event.type === 'tool' && e.event.id !== undefined && e.event.ok === undefined && !answered.has(e.event.id) ? [e.event.id] : [])));
  if (open.size === 0) return;
  // Where the agent's results name their call (`resultIds`), a transcript's end that names none of the open calls settles nothing: its readers stay unloaded.
  const pattern = agent.hook.unseenInTranscript?.resultIds;
  if (pattern !== undefined) {
    const tail = safely(() => readTailTextSync(openRegularFileSync(transcript), TRANSCRIPT_TAIL_BYTES).text, '');
    if (![...tail.matchAll(pattern)].some((m) => m[1] !== undefined && open.has(m[1]))) return;
  }
  const { jsonlTranscript, transcriptResults } = turnModule();
  const adapter = jsonlTranscript(agent.id);
  if (adapter === undefined) return;
  // The transcript's names of the open calls, and back (an agent may name a call there otherwise than to its hook).
  const named = agent.hook.transcriptCallId;
  const hookId = new Map([...open].map((id) => [named !== undefined ? named(id) : id, id]));
  const found = await withTimeout(transcriptResults(transcript, adapter, new Set(hookId.keys())), SETTLE_BUDGET_MS, []);
  const ts = new Date().toISOString();
  const done = new Set<string>();
  for (const e of found) {
    if (e.type !== 'tool_result' && e.type !== 'tool') continue;
    // A result that says nothing of how the call went settles nothing.
    if (e.ok === undefined) continue;
    const id = e.id !== undefined ? hookId.get(e.id) : undefined;
    if (id === undefined || done.has(id)) continue;
    done.add(id);
    const fields = e.ok === false ? { ok: false, error: boundedText(e.error ?? 'failed') } : { ok: true, output: boundedValue(e.output ?? null) };
    appendEvent(ws, rel, { v: 1, ts, session: history[history.length - 1]?.event.session ?? '', agent: agent.eventAgent, type: 'tool_result', id, ...fields } as GuardianEvent);
  }
}

/**
 * Records the session's calls its hook never saw (`unseenInTranscript`), from the end of the
 * agent's transcript: settled calls whose ids the session's log does not hold, each as one call
 * with its outcome, at its own time. Their ids; none where the transcript cannot be read in time.
 */
export async function recordUnseen(agent: HookedAgent, ws: Workspace, rel: string, session: string, transcript: string): Promise<Set<string>> {
  const history = readHookTail(ws.path(rel), rel);
  const known = new Set(history.flatMap((e) => (e.event.type === 'tool' || e.event.type === 'tool_result') && e.event.id !== undefined ? [e.event.id] : []));
  // Most calls have nothing unseen: the end of the transcript names no result the log lacks, and the readers stay unloaded.
  const pattern = agent.hook.unseenInTranscript?.resultIds;
  const tail = safely(() => readTailTextSync(openRegularFileSync(transcript), TRANSCRIPT_TAIL_BYTES).text, '');
  if (pattern === undefined || ![...tail.matchAll(pattern)].some((m) => m[1] !== undefined && !known.has(m[1]))) return new Set();
  const { jsonlTranscript, unseenCalls } = turnModule();
  const adapter = jsonlTranscript(agent.id);
  if (adapter === undefined) return new Set();
  const found = await withTimeout(unseenCalls(transcript, adapter, session, known, history[0]?.event.ts), TRANSCRIPT_BUDGET_MS, []);
  const ids = new Set<string>();
  for (const e of found) {
    if (e.id === undefined || ids.has(e.id)) continue;
    ids.add(e.id);
    const fields = e.ok === false ? { ok: false, error: boundedText(e.error ?? 'failed') } : { ok: true, output: boundedValue(e.output ?? null) };
    appendEvent(ws, rel, { v: 1, ts: e.ts ?? new Date().toISOString(), session, agent: agent.eventAgent, type: 'tool', tool: e.tool, args: boundedArgs(e.args ?? {}), id: e.id, ...fields } as GuardianEvent);
  }
  return ids;
}
