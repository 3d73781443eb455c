import { attemptKey, attemptMayOccurIn } from './attempt';
import { Canonicalizer } from './canonical';
import type { GuardianConfig } from './config';
import type { LocatedEvent } from './events';
import type { Finding } from './finding';
import type { StopState } from './stopAll';

/*
 * What the gate answers, and what it can answer without replaying the session (`quickVerdict`):
 * the hook decides most calls here, without loading the engine (gate.ts replays the rest).
 */

/** A call the agent is about to make. */
export interface PendingCall {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly session: string;
  readonly agent: string;
  readonly ts: string;
}

export type GateVerdict =
  | { readonly allow: true }
  | { readonly allow: false; readonly why: 'stop' | 'pause' | 'loop'; readonly reason: string; readonly finding?: Finding };

export type Refusal = Extract<GateVerdict, { readonly allow: false }>;

export interface GateInput {
  /** The session's recent events, oldest first. */
  readonly history: readonly LocatedEvent[];
  readonly call: PendingCall;
  readonly stop: StopState;
  readonly config: GuardianConfig;
}

/** The most of a person's STOP reason a refusal repeats. */
const MAX_STOP_REASON = 300;

function stopReason(stop: StopState): string {
  const reason = stop.reason !== undefined && stop.reason.length > MAX_STOP_REASON ? `${stop.reason.slice(0, MAX_STOP_REASON)}…` : stop.reason;
  const by = stop.by !== undefined && stop.by.length > 80 ? `${stop.by.slice(0, 80)}…` : stop.by;
  return [reason, by && `by ${by}`, stop.timestamp && `since ${stop.timestamp.slice(0, 40)}`].filter(Boolean).join(', ');
}

/**
 * What STOP_ALL says of a call, before anything else is looked at: STOP refuses every call; PAUSE
 * refuses delegations (subagents, new tasks). Undefined when it does not refuse this call.
 */
export function stopGate(stop: StopState, tool: string | undefined, delegationTools: readonly string[]): Refusal | undefined {
  if (stop.status === 'STOP') {
    const why = stopReason(stop);
    return {
      allow: false,
      why: 'stop',
      reason: `Loop Guardian: STOP_ALL is set to STOP${why ? ` (${why})` : ''}. Every tool call and prompt is refused until a person clears it (loop-guardian clear, or "Loop Guardian: Resume (CLEAR)" in VS Code). Stop working and report where you are.`,
    };
  }
  if (stop.status === 'PAUSE' && tool !== undefined && delegationTools.includes(tool)) {
    const why = stopReason(stop);
    return {
      allow: false,
      why: 'pause',
      reason: `Loop Guardian: STOP_ALL is set to PAUSE${why ? ` (${why})` : ''}: no new subagents or tasks may start. Finish the current work with your own tools, then stop.`,
    };
  }
  return undefined;
}

/**
 * What can be said of a call without replaying the session: first what STOP_ALL says (`stopGate`);
 * then a call that is the attempt of none of the session's recent calls is allowed. Undefined when
 * only the replay can tell (`judgeByReplay` in gate.ts).
 */
export function quickVerdict(input: GateInput): GateVerdict | undefined {
  const { call, stop, config } = input;
  const stopped = stopGate(stop, call.tool, config.hooks.delegationTools);
  if (stopped) return stopped;
  const canon = new Canonicalizer(config.volatileKeys, config.volatileArgs);
  // The hook's usual case, answered without replaying the history: a call that is none of the
  // session's recent calls tried again is allowed. Every refusal needs an earlier call of its
  // attempt: a standing halt is "about" the attempts of its calls, and the probe, a success with a
  // new result, can only trip a signal by repeating a call (a repeat in a row, in the window, a
  // cycle's next call, the failures of the same call), which is its attempt too.
  let key: string | undefined;
  const repeats = input.history.some((e) => e.event.type === 'tool' && e.event.tool === call.tool && attemptKey(canon, e.event.tool, e.event.args ?? {}) === (key ??= attemptKey(canon, call.tool, call.args)));
  return repeats ? undefined : { allow: true };
}

/**
 * Whether the text of the session's hook log (its lines as the hook writes them, by
 * `JSON.stringify`) may hold an earlier call of this call's attempt (`attemptMayOccurIn`). When
 * not, `quickVerdict` allows the call whatever the history, so the hook need not parse the log
 * (most calls repeat nothing: their command, path or pattern is in no line before).
 */
export function mayRepeatIn(logText: string, call: Pick<PendingCall, 'tool' | 'args'>, config: GuardianConfig): boolean {
  return attemptMayOccurIn(new Canonicalizer(config.volatileKeys, config.volatileArgs), call.tool, call.args, logText);
}
