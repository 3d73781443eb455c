import type { GuardianConfig } from '../core/config';
import type { GuardianEvent } from '../core/events';
import { boundedArgs, boundedText, boundedValue } from '../core/redact';
import type { StopState } from '../core/stopAll';
import { attemptKey } from '../core/attempt';
import { Canonicalizer } from '../core/canonical';
import { mayRepeatIn, quickVerdict, type GateVerdict } from '../core/verdict';
import { outcomeOf, type HookCall } from '../agents/hook';
import type { HookedAgent } from '../agents/hooks';
import { appendEvent, readHookTail } from '../state/hookLog';
import type { Workspace } from '../state/workspace';
import { gateModule } from './modules';

/*
 * The hook's records of a call, in the session's hook log (src/state/hookLog.ts): before it (the
 * gate's verdict, and the call as judged), after it (its outcome, paired with the call).
 */

export function newId(): string {
  return `lg-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/** What the hook records for a call it refused as a loop: trying it again goes on counting, and says it was refused. */
export const REFUSED_PREFIX = 'Refused by Loop Guardian';

/**
 * Before a call: the gate's verdict over the session's history, and the call recorded (bounded
 * and masked: what the gate compares is what is recorded, so repeats still look alike).
 * `persisting`: the call is one the guardian has already refused as a loop in this session, and
 * the agent asks for it again: its refusal did not change the agent's course, so its run is ended
 * where the agent allows it.
 */
export function before(agent: HookedAgent, ws: Workspace, rel: string, call: HookCall & { tool: string }, stop: StopState, config: GuardianConfig): { verdict: GateVerdict; persisting: boolean } {
  const args = boundedArgs(call.input);
  // A call whose attempt cannot be in the log is allowed by quickVerdict whatever the log holds: not parsed.
  const history = readHookTail(ws.path(rel), rel, (text) => mayRepeatIn(text, { tool: call.tool, args }, config));
  const ts = new Date().toISOString();
  const base = { v: 1 as const, ts, session: call.session, agent: agent.eventAgent };
  const input = { history, call: { tool: call.tool, args, session: call.session, agent: base.agent, ts }, stop, config };
  const verdict = quickVerdict(input) ?? gateModule().judgeByReplay(input);
  let persisting = false;
  if (verdict.allow) appendEvent(ws, rel, { ...base, type: 'tool', tool: call.tool, args, id: call.id ?? newId() });
  else if (verdict.why === 'loop') {
    const canon = new Canonicalizer(config.volatileKeys, config.volatileArgs);
    const attempt = attemptKey(canon, call.tool, args);
    persisting = history.some(({ event: e }) => e.type === 'tool' && e.ok === false && e.error?.startsWith(REFUSED_PREFIX) === true && e.tool === call.tool && attemptKey(canon, e.tool, e.args ?? {}) === attempt);
    // The refused call is recorded as a failed one: trying it again goes on counting. With the
    // agent's id for it, where it gives one: the agent's transcript holds the call too, and is read
    // only for calls the hook never saw (without, each refused call was counted twice).
    appendEvent(ws, rel, { ...base, type: 'tool', tool: call.tool, args, ...(call.id !== undefined ? { id: call.id } : {}), ok: false, error: `${REFUSED_PREFIX} (${verdict.finding?.signal ?? 'loop'})` });
  }
  return { verdict, persisting };
}

/** After a call: its outcome (read in the shape of the protocol that parsed it), bounded and masked, paired with the recorded call. */
export function after(agent: HookedAgent, ws: Workspace, rel: string, call: HookCall & { tool: string }, parser: HookedAgent, background = false): void {
  const outcome = outcomeOf(parser.hook, call);
  const base = { v: 1 as const, ts: new Date().toISOString(), session: call.session, agent: agent.eventAgent };
  const fields = outcome.ok ? { ok: true, output: boundedValue(outcome.output) } : { ok: false, error: boundedText(outcome.error) };
  const args = boundedArgs(call.input);
  let id = call.id;
  // Run in the background, this record may come after the next call settled it from the transcript: not made twice.
  if (background && id !== undefined && readHookTail(ws.path(rel), rel).some((e) => e.event.type === 'tool_result' && e.event.id === id)) return;
  if (id === undefined) {
    // No id from the agent (not every agent sends one): the oldest unanswered call of the same tool and arguments.
    const history = readHookTail(ws.path(rel), rel);
    const answered = new Set(history.flatMap((e) => (e.event.type === 'tool_result' ? [e.event.id] : [])));
    const same = JSON.stringify(args);
    const open = history.find((e) => e.event.type === 'tool' && e.event.id !== undefined && e.event.ok === undefined && !answered.has(e.event.id) && e.event.tool === call.tool && JSON.stringify(e.event.args ?? {}) === same);
    id = open?.event.type === 'tool' ? open.event.id : undefined;
  }
  if (id !== undefined) appendEvent(ws, rel, { ...base, type: 'tool_result', id, ...fields } as GuardianEvent);
  // Without a recorded call (the hook was not installed before it), the call and its outcome in one event.
  else appendEvent(ws, rel, { ...base, type: 'tool', tool: call.tool, args, ...fields } as GuardianEvent);
}
