import type { SettledCall } from '../calls';
import { clip, hash53, hashText, mixHash, proseKey } from '../canonical';
import type { Detector, DetectorContext, FindingSink, Scope, SessionSlot, SessionState } from '../detector';
import type { EventRef, LocatedEvent, PromptSender } from '../events';
import { pushEvidence } from '../finding';
import { episodeId, whoOf } from './common';

/** What a session did since its latest prompt: its answer, as far as the log shows one. */
interface Turn {
  /** The answer's items (replies, calls with their outcomes, delegations) hashed in order. */
  key: number;
  /** Whether anything answered: a reply, a call, a delegation. API errors alone are no answer. */
  known: boolean;
  lastReply?: string;
}

/** A run of prompts that are the same message, and the answer they keep getting. */
interface Run {
  readonly key: string;
  readonly text: string;
  readonly from?: PromptSender;
  /** The answer the run's prompts got, once one is known. */
  answer?: number;
  /** Identical prompts whose answers, where known, did not change. */
  count: number;
  refs: EventRef[];
  episode: string;
  last: EventRef;
}

// What an item of an answer is, mixed in before its hash: a reply and a call never hash alike.
const CALL = 1;
const REPLY = 2;
const DELEGATION = 3;
/** A call's outcome key when the log does not tell it (keys are hashes: ≥ 0 for outputs, < 0 for errors). */
const UNKNOWN_OUTCOME = 2 ** 53 - 1;

const SENDER: Readonly<Record<PromptSender, string>> = { user: ' by the person', hook: ' by a hook', orchestrator: ' by an orchestrator', unknown: '' };

/**
 * Seed 000's "consecutive identical invocations", where orchestration loops happen in real agents:
 * the same prompt (`proseKey`: white space, case, timestamps and ids aside) sent again and again
 * to a session whose answers do not change in substance. A re-ask after a different answer starts
 * the count again (the person got something new and asks on); a prompt whose turn shows no answer
 * (only failed model requests: `api-error-storm`'s; or nothing recorded) neither counts nor breaks
 * the run. Empty prompts (an attachment alone) are left out.
 *
 * Severity: warn at `warnAt` (3), halt at `threshold` (5). By the fifth identical prompt answered
 * identically four times over, nothing that sends it reads the answers: stopping it costs the
 * sender one refused message with the reason, while letting it run costs a turn of the model each
 * time. Below that, a person may be re-asking deliberately, so it only warns.
 */
export class RepeatedPromptDetector implements Detector {
  readonly signal = 'repeated-prompt' as const;
  readonly events = ['prompt', 'reply', 'delegation'] as const;
  readonly spansTurns = true;
  /** Each session's run of prompts, and its answer since its latest prompt. */
  private readonly sessions: SessionSlot<{ run?: Run; turn: Turn }>;

  constructor(private readonly ctx: DetectorContext) {
    this.sessions = ctx.slot(() => ({ turn: { key: 0, known: false } }));
  }

  call(c: SettledCall, _sink: FindingSink): void {
    // Only a session that has had a prompt has an answer to follow: the others pay nothing per call.
    if (this.sessions.peek(c.sessionState)?.run === undefined) return;
    // The signature's hash the engine computed once per call, and the outcome's key: numbers mixed, no text built.
    this.note(c.sessionState, CALL, mixHash(c.signatureHash, c.outcome.key ?? UNKNOWN_OUTCOME));
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    switch (e.type) {
      case 'prompt':
        return this.prompt(e.text, e.from, located.ref, scope, sink);
      case 'reply': {
        const key = proseKey(e.text);
        if (key !== '') this.note(scope.state, REPLY, hash53(key), e.text);
        return;
      }
      case 'delegation':
        return this.note(scope.state, DELEGATION, hash53(proseKey(`${e.to ?? ''} ${e.instruction}`)));
      default:
    }
  }

  endSession(): void {
    // Spans turns: a `user` event is each prompt's own boundary, not the end of the run.
  }

  /** One more item of the session's answer: its kind and its hash, mixed into the turn's key in order. */
  private note(session: SessionState, kind: number, item: number, reply?: string): void {
    const state = this.sessions.peek(session);
    if (state?.run === undefined) return;
    const turn = state.turn;
    turn.key = mixHash(mixHash(turn.key, kind), item);
    turn.known = true;
    if (reply !== undefined) turn.lastReply = clip(reply, 160);
  }

  private prompt(raw: string, from: PromptSender | undefined, ref: EventRef, scope: Scope, sink: FindingSink): void {
    const text = proseKey(raw);
    if (text === '') return;
    const session = scope.session;
    const state = this.sessions.of(scope.state);
    const answered = state.turn;
    state.turn = { key: 0, known: false };
    const key = hashText(text);
    const run = state.run;
    if (!run || run.key !== key) {
      if (run) sink.resolve(run.episode);
      state.run = { key, text: raw, ...(from !== undefined ? { from } : {}), count: 1, refs: [ref], episode: episodeId(this.signal, session, ref), last: ref };
      return;
    }
    if (answered.known) {
      if (run.answer === answered.key) {
        run.count++;
        pushEvidence(run.refs, ref);
      } else {
        // The first answer known, or a different one: count from the prompt that got it.
        if (run.answer !== undefined) {
          sink.resolve(run.episode);
          run.episode = episodeId(this.signal, session, run.last);
        }
        run.answer = answered.key;
        run.count = 2;
        run.refs = [run.last, ref];
      }
    } else {
      // No answer to compare: the prompt joins the evidence (a standing halt still covers it), the count stays.
      pushEvidence(run.refs, ref);
    }
    run.last = ref;
    this.check(run, answered.lastReply, ref, scope, sink);
  }

  private check(run: Run, reply: string | undefined, at: EventRef, scope: Scope, sink: FindingSink): void {
    const { threshold, warnAt } = this.ctx.config.signals[this.signal];
    if (run.count < Math.min(warnAt, threshold)) return;
    const halt = run.count >= threshold;
    const action = halt ? ('halt' as const) : ('warn' as const);
    sink.report({ episode: run.episode, action, count: run.count, evidence: run.refs }, () => ({
      signal: this.signal,
      action,
      count: run.count,
      threshold,
      at,
      ...whoOf(scope),
      subject: clip(run.text, 100),
      message: `The same prompt was sent ${run.count} times in a row${SENDER[run.from ?? 'unknown'] ?? ''}, each time after the same answer${reply !== undefined ? ` ("${reply}")` : ''}: "${clip(run.text, 120)}"`,
      recommendation:
        'An orchestration loop: whatever sends this prompt (a hook, a script, an orchestrating agent, or a person pasting it again) does not act on the answer. Stop it, read the answer, and change the prompt, the agent\'s mode or its permissions before sending again.',
      evidence: [...run.refs],
      ...(halt ? { status: 'STALLED' as const } : {}),
      episode: run.episode,
      details: { promptKey: run.key },
    }));
  }
}
