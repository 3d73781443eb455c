import { attemptKey } from './attempt';
import { Canonicalizer } from './canonical';
import type { GuardianConfig, SignalId } from './config';
import { Engine } from './engine';
import type { EventRef, GuardianEvent, LocatedEvent } from './events';
import type { Finding } from './finding';
import type { StopState } from './stopAll';
import { quickVerdict, stopGate, type GateInput, type GateVerdict, type Refusal } from './verdict';

/**
 * Whether the call may run: what `quickVerdict` says (STOP_ALL, or a call that is none of the
 * session's recent calls tried again). Otherwise the session's history is replayed through the
 * engine `scan` and `replay` run, and the call is refused when it is the same attempt (attempt.ts)
 * as the calls of a loop the engine halts there, or when, tried as the next event with the most
 * hopeful outcome, it trips a halt itself: one judgement, with what repeated and what to do.
 */
export function gate(input: GateInput): GateVerdict {
  return quickVerdict(input) ?? judgeByReplay(input);
}

/**
 * `gate` by replaying the history and asking the engine, STOP_ALL aside: what it answers for a
 * call that is an earlier one tried again (exported for the hook, which loads it only then, and
 * for the test that holds `quickVerdict`'s shortcut to it).
 */
export function judgeByReplay(input: GateInput): GateVerdict {
  const { call, config } = input;
  const deny = new Set<SignalId>(config.hooks.deny);
  const engine = new Engine(config, { trackNews: true });
  const canon = new Canonicalizer(config.volatileKeys, config.volatileArgs);
  const key = (ref: EventRef) => `${ref.file}:${ref.line}`;
  const position = new Map<string, number>();
  input.history.forEach((e, i) => position.set(key(e.ref), i));
  // The attempt of the call at a history line: written only for the lines a standing halt's
  // evidence names (most replays have none), once each.
  const attempts = new Map<string, string | undefined>();
  const attemptAt = (ref: EventRef): string | undefined => {
    const k = key(ref);
    if (attempts.has(k)) return attempts.get(k);
    const e = input.history[position.get(k) ?? -1]?.event;
    const attempt = e?.type === 'tool' ? attemptKey(canon, e.tool, e.args ?? {}) : undefined;
    attempts.set(k, attempt);
    return attempt;
  };
  for (const e of input.history) engine.push(e);
  engine.flush();
  const attempt = attemptKey(canon, call.tool, call.args);
  // A standing halt whose calls this call tries again: it is the loop, unless the agent did
  // something else that ended in a new way since (it read the file the failing edit needed):
  // that is recovery. A variation of the loop's own call that failed anew is no such thing.
  const news = engine.lastNews(call.session);
  for (const f of engine.active()) {
    if (f.action !== 'halt' || !deny.has(f.signal)) continue;
    const last = f.evidence[f.evidence.length - 1];
    if (last === undefined) continue;
    // A cycle goes on with its next call (another of its calls, out of turn, is breaking out);
    // any other loop with any of its calls tried again.
    const about = f.signal === 'cycle' ? attemptAt(last) === attempt || nextInCycle(f.evidence.map(attemptAt)) === attempt : f.evidence.some((r) => attemptAt(r) === attempt);
    if (!about) continue;
    const recovered = news !== undefined && attemptAt(news.ref) !== attempt && (position.get(key(news.ref)) ?? -1) > (position.get(key(last)) ?? Infinity);
    if (!recovered) return loopVerdict(f);
  }
  const last = input.history[input.history.length - 1];
  const ref: EventRef = { file: '(this call)', line: (last?.ref.line ?? 0) + 1, event: (last?.ref.event ?? 0) + 1 };
  const probe: GuardianEvent = {
    v: 1,
    type: 'tool',
    tool: call.tool,
    args: call.args,
    session: call.session,
    agent: call.agent,
    ts: call.ts,
    ok: true,
    // A result never seen before: the most hopeful outcome, so only a loop that no outcome can break is refused.
    output: `\u0000probe:${Math.random()}`,
  };
  const raised = [...engine.push({ event: probe, ref }), ...engine.flush()];
  const involves = (f: Finding) => f.at.file === ref.file || f.evidence.some((r) => r.file === ref.file);
  const halt = raised.find((f) => f.action === 'halt' && deny.has(f.signal) && involves(f));
  return halt ? loopVerdict(halt) : { allow: true };
}

/** The call a cycle's evidence says comes next: the one a period before the end. */
function nextInCycle(attempts: readonly (string | undefined)[]): string | undefined {
  for (let p = 2; p * 2 <= attempts.length; p++) {
    let periodic = true;
    for (let i = p; i < attempts.length && periodic; i++) periodic = attempts[i] !== undefined && attempts[i] === attempts[i - p];
    if (periodic) return attempts[attempts.length - p];
  }
  return undefined;
}

function loopVerdict(f: Finding, what = 'call'): GateVerdict {
  return {
    allow: false,
    why: 'loop',
    finding: f,
    reason: `Loop Guardian refused this ${what} (${f.signal}, ${f.count}/${f.threshold}): ${f.message.endsWith('.') ? f.message.slice(0, -1) : f.message}. ${f.recommendation}`,
  };
}

/** A prompt about to be sent to the model. */
export interface PendingPrompt {
  readonly text: string;
  readonly session: string;
  readonly agent: string;
  readonly ts: string;
}

export interface PromptGateInput {
  /** The session's recent events (its prompts, the answers recorded, its calls), oldest first. */
  readonly history: readonly LocatedEvent[];
  readonly prompt: PendingPrompt;
  readonly stop: StopState;
  readonly config: GuardianConfig;
}

/**
 * Whether a prompt may be sent: STOP refuses every prompt (PAUSE does not: a person's prompt may
 * be what ends the pause). Otherwise the session's history is replayed and the prompt tried as the
 * next event: it is refused when `repeated-prompt` (if the hooks deny on it) halts on it, or a
 * standing halt of it covers it (the same prompt again, its answers unchanged).
 */
export function promptGate(input: PromptGateInput): GateVerdict {
  const { prompt, stop, config } = input;
  if (stop.status === 'STOP') return stopGate(stop, undefined, []) as Refusal;
  if (!config.hooks.deny.includes('repeated-prompt')) return { allow: true };
  const engine = new Engine(config);
  for (const e of input.history) engine.push(e);
  engine.flush();
  const last = input.history[input.history.length - 1];
  const ref: EventRef = { file: '(this prompt)', line: (last?.ref.line ?? 0) + 1, event: (last?.ref.event ?? 0) + 1 };
  const probe: GuardianEvent = { v: 1, type: 'prompt', text: prompt.text, session: prompt.session, agent: prompt.agent, ts: prompt.ts };
  const raised = engine.push({ event: probe, ref });
  const halt = [...raised, ...engine.active()].find((f) => f.signal === 'repeated-prompt' && f.action === 'halt' && f.evidence.some((r) => r.file === ref.file));
  return halt ? loopVerdict(halt, 'prompt') : { allow: true };
}
