import { callId, isProgress, withinTransientBudget, type Outcome, type SettledCall } from '../calls';
import { sayCall } from '../plainWords';
import { adviceForCall } from '../advice';
import { telltaleLine } from '../errorLines';
import type { Detector, DetectorContext, FindingSink, SessionSlot, SessionState } from '../detector';
import type { EventRef } from '../events';
import { SessionChains } from './chains';
import { clear, whoOf } from './common';
import { pushBounded } from '../finding';
import { clip } from '../canonical';

/**
 * Seed 001: the same tool with the same canonical arguments N times in a row. Calls made before
 * any of their results came back (a batch of parallel calls) are one attempt. When not one result
 * of the run is known (a transcript that keeps calls only, a hook told no outcome), whether it
 * gets anywhere cannot be known: it may be a poll waiting for something (issue 25: a search for a
 * log file that has not appeared yet), so the repetition alone is the evidence, and it must be
 * twice as long to halt; until then it warns, saying what cannot be known.
 */
export class IdenticalCallsDetector implements Detector {
  readonly signal = 'identical-calls' as const;
  /** Each session's run, by its call's id (`callId`): the call itself is not kept. */
  private readonly chains: SessionChains<number>;
  /** The outcomes of each session's current run, for the progress rule. */
  private readonly outcomes: SessionSlot<{ start?: EventRef; readonly list: Outcome[] }>;

  constructor(private readonly ctx: DetectorContext) {
    this.chains = new SessionChains<number>(ctx, this.signal);
    this.outcomes = ctx.slot(() => ({ list: [] }));
  }

  call(c: SettledCall, sink: FindingSink): void {
    const { threshold } = this.ctx.config.signals[this.signal];
    const chain = this.chains.extend(c.sessionState, callId(c), c.ref, sink, c.attempt);
    const outcomes = this.outcomes.of(c.sessionState);
    if (outcomes.start !== chain.started) {
      // A new run: the session's list starts again (one list per session, not one per run).
      outcomes.start = chain.started;
      clear(outcomes.list);
    }
    pushBounded(outcomes.list, c.outcome, 50);
    if (chain.count < threshold) return;
    // Progress: every call succeeded with a new result (polling that gets somewhere), or every
    // failure so far is a transient one within its retry budget (a flaky step tried again).
    const transient = withinTransientBudget(outcomes.list, this.ctx.config.signals['failing-call'].retries.transient);
    // The latest call aside: the hook's gate judges a call before it runs, with the most hopeful outcome.
    const unknown = noneKnown(outcomes.list, outcomes.list.length - 1);
    const progress = transient || isProgress(outcomes.list) || (unknown && chain.count < 2 * threshold);
    sink.report({ episode: chain.episode, action: progress ? 'warn' : 'halt', count: chain.count, evidence: chain.refs }, () => {
      // Said in words only when a finding is made: a call that only grows the run pays nothing.
      const subject = sayCall(c.tool, c.args);
      return {
        signal: this.signal,
        action: progress ? 'warn' : 'halt',
        count: chain.count,
        threshold,
        at: c.settledAt,
        ...whoOf(c),
        subject,
        message: (transient
          ? `${subject} called ${chain.count} times in a row after transient failures (a time-out, the network, a rate limit): retries within their budget`
          : unknown
          ? `${progress ? `${subject} called ${chain.count} times in a row` : `Same action repeated ${chain.count} times consecutively: ${subject}`}; their results are not recorded, so whether they get anywhere cannot be known`
          : progress
          ? `${subject} called ${chain.count} times in a row; every call succeeded with a new result, so it looks like polling with progress`
          : `Same action repeated ${chain.count} times consecutively: ${subject}, with no progress`) + lastError(outcomes.list),
        recommendation: progress
          ? `If ${c.tool} is polling, make sure it has an end condition; otherwise change the arguments or the approach.`
          : adviceForCall(c.tool, c.outcome),
        evidence: [...chain.refs],
        ...(progress ? {} : { status: 'STALLED' as const }),
        episode: chain.episode,
      };
    });
  }

  endSession(session: SessionState): void {
    this.chains.endSession(session);
    this.outcomes.clear(session);
  }
}

/** The run's latest real error, said after the message: what the loop is stuck on (none when no call failed). */
function lastError(outcomes: readonly Outcome[]): string {
  for (let i = outcomes.length - 1; i >= 0; i--) {
    const o = outcomes[i] as Outcome;
    if (o.kind === 'error') return `; it fails with: ${clip(telltaleLine(o.error), 160)}`;
  }
  return '';
}

/** Whether none of the first `n` outcomes is known. */
function noneKnown(outcomes: readonly Outcome[], n: number): boolean {
  for (let i = 0; i < n; i++) if ((outcomes[i] as Outcome).kind !== 'unknown') return false;
  return true;
}
