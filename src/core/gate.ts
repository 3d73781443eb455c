import { callSignature } from './calls';
import { Canonicalizer } from './canonical';
import type { GuardianConfig, SignalId } from './config';
import { Engine } from './engine';
import type { EventRef, GuardianEvent, LocatedEvent } from './events';
import type { Finding } from './finding';
import type { StopState } from './stopAll';
import { quickVerdict, stopGate, type GateInput, type GateVerdict, type Refusal } from './verdict';

/**
 * Whether the call may run: what `quickVerdict` says (STOP_ALL, or a call that repeats none of
 * the session's recent calls). Otherwise the session's history is replayed and the call is tried
 * as the next event, assuming it would succeed with a new result: when even then a halt signal
 * trips on it, or it repeats the very call a standing halt is about, it is refused with what
 * repeated and what to do.
 */
export function gate(input: GateInput): GateVerdict {
  return quickVerdict(input) ?? judgeByReplay(input);
}

/**
 * `gate` by replaying the history and trying the call as the next event, STOP_ALL aside: what it
 * answers for a call that repeats an earlier one (exported for the hook, which loads it only then,
 * and for the test that holds `quickVerdict`'s shortcut to it).
 */
export function judgeByReplay(input: GateInput): GateVerdict {
  const { call, config } = input;
  const deny = new Set<SignalId>(config.hooks.deny);
  const engine = new Engine(config, { trackNews: true });
  const canon = new Canonicalizer(config.volatileKeys, config.volatileArgs);
  const key = (ref: EventRef) => `${ref.file}:${ref.line}`;
  const position = new Map<string, number>();
  input.history.forEach((e, i) => position.set(key(e.ref), i));
  // The signature of the call at a history line: written only for the lines a standing halt's
  // evidence names (most replays have none), once each.
  const signatures = new Map<string, string | undefined>();
  const signatureAt = (ref: EventRef): string | undefined => {
    const k = key(ref);
    if (signatures.has(k)) return signatures.get(k);
    const e = input.history[position.get(k) ?? -1]?.event;
    const sig = e?.type === 'tool' ? callSignature(e.tool, canon.args(e.tool, e.args ?? {})) : undefined;
    signatures.set(k, sig);
    return sig;
  };
  for (const e of input.history) engine.push(e);
  engine.flush();
  const signature = callSignature(call.tool, canon.args(call.tool, call.args));
  // A standing halt about this very call: retrying it is the loop, unless the agent did something
  // else that ended in a new way since (it read the file the failing edit needed): that is recovery.
  const news = engine.lastNews(call.session);
  for (const f of engine.active()) {
    if (f.action !== 'halt' || !deny.has(f.signal)) continue;
    const last = f.evidence[f.evidence.length - 1];
    if (last === undefined) continue;
    const about = signatureAt(last) === signature || (f.signal === 'cycle' && nextInCycle(f.evidence.map(signatureAt)) === signature);
    if (!about) continue;
    const recovered = news !== undefined && news.signature !== signature && (position.get(key(news.ref)) ?? -1) > (position.get(key(last)) ?? Infinity);
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
function nextInCycle(sigs: readonly (string | undefined)[]): string | undefined {
  for (let p = 2; p * 2 <= sigs.length; p++) {
    let periodic = true;
    for (let i = p; i < sigs.length && periodic; i++) periodic = sigs[i] !== undefined && sigs[i] === sigs[i - p];
    if (periodic) return sigs[sigs.length - p];
  }
  return undefined;
}

function loopVerdict(f: Finding, what = 'call'): GateVerdict {
  return {
    allow: false,
    why: 'loop',
    finding: f,
    reason: `Loop Guardian refused this ${what} (${f.signal}, ${f.count}/${f.threshold}): ${f.message}. ${f.recommendation}`,
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
