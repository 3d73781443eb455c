import type { HookCall } from '../agents/hook';
import type { HookedAgent } from '../agents/hooks';
import { handoverFailed, recordHandover, settleHandover } from '../state/heartbeat';
import { readHookTail } from '../state/hookLog';
import type { Workspace } from '../state/workspace';
import { safely } from './bounded';
import { REFUSED_PREFIX } from './record';

/*
 * A refusal handed over to the agent's permission request, for an agent that ends its run only
 * there (its protocol's `endsLater`, which says for which calls, and why, in the agent's own
 * room). The pre-call
 * hook lets the call through and records the handover (src/state/heartbeat.ts); the permission
 * request for that very call is then refused and the run ended. Where the agent ran the call
 * without asking (the handover failed), this session's refusals are given before the call again.
 */

/** Whether this refusal is to be handed over: the agent ends the run only at the call's permission request, and handing over has not failed in this session. */
export function handsOver(agent: HookedAgent, who: HookedAgent, ws: Workspace, call: HookCall): boolean {
  return agent.hook.endsLater?.(call) === true && !safely(() => handoverFailed(ws, who.id, call.session), true);
}

/** Records the handover; false where it cannot be recorded (then the call is refused at once). */
export function handOver(ws: Workspace, who: HookedAgent, call: HookCall): boolean {
  return safely(() => (recordHandover(ws, who.id, call.session, call.tool ?? ''), true), false);
}

/** A permission request settles a refusal handed to it (refused under STOP or for the loop). */
export function handoverDone(ws: Workspace, who: HookedAgent, call: HookCall): void {
  safely(() => recordHandover(ws, who.id, call.session, call.tool ?? '', 'done'), undefined);
}

/**
 * At the agent's permission request: the reason to refuse it and end the run, where the session's
 * last record is the refusal of this very call (the same tool, every argument the request names
 * equal) handed over here; else undefined.
 */
export function handedOver(ws: Workspace, rel: string, call: HookCall): string | undefined {
  const last = readHookTail(ws.path(rel), rel).at(-1)?.event;
  if (last === undefined || last.type !== 'tool' || last.ok !== false || last.error?.startsWith(REFUSED_PREFIX) !== true || last.tool !== call.tool) return undefined;
  const args = last.args ?? {};
  const same = Object.entries(call.input).every(([k, v]) => JSON.stringify(args[k]) === JSON.stringify(v));
  return same ? `Loop Guardian ended this run: ${call.tool} was refused as a loop (${last.error.slice(REFUSED_PREFIX.length).trim()}) and asked for again. Change the approach, or ask the person.` : undefined;
}

/** After a call: whether it was one whose refusal had been handed over (the agent ran it without asking: the handover failed). */
export function ranWithoutPermission(ws: Workspace, who: HookedAgent, call: HookCall & { tool: string }): boolean {
  return safely(() => settleHandover(ws, who.id, call.session, call.tool), false);
}
