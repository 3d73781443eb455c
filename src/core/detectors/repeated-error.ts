import type { SettledCall } from '../calls';
import { clip } from '../canonical';
import { adviceForCall } from '../advice';
import { sessionKey, type Detector, type DetectorContext, type FindingSink, type Scope, type SessionSlot, type SessionState } from '../detector';
import { telltaleLine } from '../errorLines';
import { ErrorText, sameError } from '../errorMatch';
import type { EventRef, LocatedEvent } from '../events';
import type { Finding } from '../finding';
import { Chains, SessionChains, type Chain } from './chains';
import { whoOf } from './common';

/**
 * Seeds 001 and 003: consecutive failures with the same error (fuzzy-matched as seed 003 says),
 * tool failures per session and task attempts per task. Warns at `warnAt`, halts at `threshold`.
 * Read as a person reads a session (issue 25):
 * - the same error is a loop only when it is the same thing tried again: calls with one intent
 *   (intent.ts: the tool and its target, a shell command's main program) may halt; calls with
 *   different intents that fail alike (three different probes, two tools each missing a
 *   parameter, polls of three different processes) only warn: error text alone never halts;
 * - calls made before any of their results came back (a batch of parallel calls) are one attempt;
 * - a search that found nothing answered (intent.ts `searchFoundNothing`): it is no failure.
 */
export class RepeatedErrorDetector implements Detector {
  readonly signal = 'repeated-error' as const;
  readonly events = ['attempt'] as const;
  /**
   * The key is the latest error of the run: each failure is compared with the one before it. A
   * session's calls are one slot (the session itself, named `calls` in episode ids), each of its
   * tasks another.
   */
  private readonly calls: SessionChains<ErrorText>;
  private readonly tasks: Chains<ErrorText>;
  /** Each session's current run of failing calls: its first call, and whether a later one has another intent. */
  private readonly intents: SessionSlot<{ start?: EventRef; first?: SettledCall; mixed: boolean }>;

  constructor(private readonly ctx: DetectorContext) {
    this.intents = ctx.slot(() => ({ mixed: false }));
    this.tasks = new Chains(ctx, this.signal, sameErrorText, (session, task) => sessionKey(session, 'task', task));
    this.calls = new SessionChains(ctx, this.signal, sameErrorText, (session) => sessionKey(session, 'calls'));
  }

  call(c: SettledCall, sink: FindingSink): void {
    if (c.outcome.kind === 'unknown') return;
    if (c.outcome.kind === 'ok') return this.calls.end(c.sessionState, sink);
    const outcome = c.outcome;
    const chain = this.calls.extend(c.sessionState, new ErrorText(outcome.error), c.ref, sink, c.attempt);
    const run = this.intents.of(c.sessionState);
    if (run.start !== chain.started) {
      run.start = chain.started;
      run.first = c;
      run.mixed = false;
      // A call's intent is read only when its run repeats (most failures never do).
    } else if (!run.mixed && run.first !== undefined && run.first.intent !== c.intent) run.mixed = true;
    // Most runs end short of a finding: nothing is said of them.
    if (!this.reaches(chain)) return;
    const what = run.mixed ? 'different calls fail' : `${c.tool} fails`;
    this.check(chain, c.settledAt, whoOf(c), what, () => (run.mixed ? `Different calls end with the same error: look at what they have in common (a missing tool, a wrong folder, the network) before the next one.` : adviceForCall(c.tool, outcome)), sink, run.mixed);
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'attempt') return;
    if (e.ok) return this.tasks.end(scope.state, e.task, sink);
    const error = e.error ?? (e.gate !== undefined ? `quality gate ${e.gate} failed` : undefined);
    if (error === undefined) return;
    const chain = this.tasks.extend(scope.state, e.task, new ErrorText(error), located.ref, sink);
    if (!this.reaches(chain)) return;
    this.check(
      chain,
      located.ref,
      whoOf(scope),
      `task ${e.task} fails`,
      () => 'The same error survives every attempt: force-escalate 2 tiers (skip the ineffective middle tier) or find the root cause before retrying.',
      sink,
    );
  }

  endSession(session: SessionState): void {
    this.intents.clear(session);
    this.calls.endSession(session);
    this.tasks.endSession(session);
  }

  /** Whether the run is long enough to be reported (warned of, at least). */
  private reaches(chain: Chain<ErrorText>): boolean {
    const { threshold, warnAt } = this.ctx.config.signals[this.signal];
    return chain.count >= Math.min(warnAt, threshold);
  }

  /**
   * Reports a run that `reaches` a finding. `advice` is written when the finding is. `warnOnly`: the
   * run's calls are different things (different intents): it may warn, never halt.
   */
  private check(chain: Chain<ErrorText>, at: EventRef, who: Pick<Finding, 'session' | 'task' | 'agent'>, what: string, advice: () => string, sink: FindingSink, warnOnly = false): void {
    const { threshold } = this.ctx.config.signals[this.signal];
    const halt = chain.count >= threshold && !warnOnly;
    sink.report({ episode: chain.episode, action: halt ? 'halt' : 'warn', count: chain.count, evidence: chain.refs }, () => {
      const said = telltaleLine(chain.key.raw);
      return {
        signal: this.signal,
        action: halt ? 'halt' : 'warn',
        count: chain.count,
        threshold,
        at,
        ...who,
        subject: clip(said, 100),
        message: `${what} with the same error ${chain.count} times in a row: ${clip(said, 160)}`,
        recommendation: advice(),
        evidence: [...chain.refs],
        ...(halt ? { status: 'STALLED' as const } : {}),
        episode: chain.episode,
      };
    });
  }
}

function sameErrorText(a: ErrorText, b: ErrorText): boolean {
  return sameError(a, b) !== undefined;
}
