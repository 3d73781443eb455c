import { progressOf, type SettledCall } from '../calls';
import { sayCall } from '../plainWords';
import { adviceForCall } from '../advice';
import type { Detector, DetectorContext, FindingSink, SessionSlot, SessionState } from '../detector';
import { episodeId, whoOf } from './common';
import { CallSteps } from './steps';

/** A repeat at or above the threshold: its episode and the id of its call (as the call carries it: `signatureHash`, `signatureHigh`). */
interface ActiveRepeat {
  readonly episode: string;
  readonly hash: number;
  readonly high: number;
}

/** A session's repeats at or above the threshold (its last calls are the session's window, `SessionState.steps`). */
interface SessionWindow {
  readonly active: ActiveRepeat[];
}

/**
 * Seed 002: the same tool with identical arguments `threshold` times within `window` steps.
 * Repeats back to back are left to identical-calls when it would report them; otherwise they
 * follow the strict progress rule. Repeats with other calls between them are judged by what
 * they ended with (issue 9, from real transcripts):
 * - a repeat that ends in a way none before it did is progress: the retry that succeeds after the
 *   agent did something else first (recovery), the run whose output changes after each edit;
 * - one repeat that ends as an earlier one did is information (re-running a check after an edit),
 *   not a loop: the finding needs `threshold - 1` stale repeats, the latest among them;
 * - then it halts when nothing since the previous repeat ended in a new way, and only warns when
 *   the calls in between still bring new results (edits that change, searches that find more) or
 *   are calls the agent had not made before (an edit, then the build again: a new attempt).
 */
export class WindowedRepeatDetector implements Detector {
  readonly signal = 'windowed-repeat' as const;
  private readonly sessions: SessionSlot<SessionWindow>;
  /** The last `window` calls of the session being judged, as numbers (steps are the same call when their ids are). */
  private readonly latest = new CallSteps(0);

  constructor(private readonly ctx: DetectorContext) {
    const { window } = ctx.config.signals[this.signal];
    ctx.window(this.signal, window);
    this.sessions = ctx.slot(() => ({ active: [] }));
  }

  call(c: SettledCall, sink: FindingSink): void {
    const { threshold, window } = this.ctx.config.signals[this.signal];
    const s = this.sessions.of(c.sessionState);
    const steps = this.latest.readLatest(c.sessionState.steps as CallSteps, window);
    const hash = c.signatureHash;
    const high = c.signatureHigh;

    // The active repeats that fell below the threshold are over (kept in place, in their order).
    let kept = 0;
    for (const a of s.active) {
      if ((a.hash === hash && a.high === high) || steps.count(a.hash, a.high) >= threshold) s.active[kept++] = a;
      else sink.resolve(a.episode);
    }
    s.active.length = kept;
    if (steps.count(hash, high) < threshold) {
      endRepeat(s, hash, high, sink);
      return;
    }
    const indexes: number[] = [];
    for (let i = 0; i < steps.length; i++) if (steps.is(i, hash, high)) indexes.push(i);
    const backToBack = (indexes[indexes.length - 1] as number) - (indexes[0] as number) === indexes.length - 1;
    const identical = this.ctx.config.signals['identical-calls'];
    // Back-to-back repeats are identical-calls' to report: one loop, one alarm.
    if (backToBack && identical.enabled && indexes.length >= identical.threshold) return;
    let progress: boolean;
    if (backToBack) progress = progressOf(indexes.length, (i) => steps.succeededWith(indexes[i] as number));
    else {
      const stale = staleRepeats(steps, indexes);
      if (!stale[stale.length - 1] || stale.filter(Boolean).length < threshold - 1) {
        // Moving on: recovery, changing results, or a single unchanged check.
        endRepeat(s, hash, high, sink);
        return;
      }
      progress = newSince(steps, indexes[indexes.length - 2] as number, indexes[indexes.length - 1] as number);
    }
    let episode = s.active[activeIndex(s, hash, high)]?.episode;
    if (episode === undefined) {
      episode = episodeId(this.signal, c.session, steps.ref(indexes[0] as number));
      s.active.push({ episode, hash, high });
    }
    const evidence = indexes.map((i) => steps.ref(i));
    sink.report({ episode: episode, action: progress ? 'warn' : 'halt', count: indexes.length, evidence }, () => {
      // Said in words only when a finding is made: a call that only grows the run pays nothing.
      const subject = sayCall(c.tool, c.args);
      return {
        signal: this.signal,
        action: progress ? 'warn' : 'halt',
        count: indexes.length,
        threshold,
        at: c.settledAt,
        ...whoOf(c),
        subject,
        message: progress
          ? `${subject} ran ${indexes.length} times within the last ${window} steps, each time with a different result`
          : `${subject} ran ${indexes.length} times within the last ${window} steps without progress`,
        recommendation: progress
          ? `Keep an eye on ${c.tool}: it repeats, but its results still change.`
          : adviceForCall(c.tool, c.outcome),
        evidence: [...evidence],
        ...(progress ? {} : { status: 'STALLED' as const }),
        episode,
      };
    });
  }

  endSession(session: SessionState): void {
    // The session's window is emptied by the engine (kept for the session's next turn).
    const s = this.sessions.peek(session);
    if (s !== undefined) s.active.length = 0;
  }
}

/** The call's repeat is over: its episode resolved, if it had one. */
function endRepeat(s: SessionWindow, hash: number, high: number, sink: FindingSink): void {
  const at = activeIndex(s, hash, high);
  if (at < 0) return;
  sink.resolve((s.active[at] as ActiveRepeat).episode);
  s.active.splice(at, 1);
}

/** Where the call's repeat is among the active ones; -1 when it is not. */
function activeIndex(s: SessionWindow, hash: number, high: number): number {
  for (let i = 0; i < s.active.length; i++) {
    const a = s.active[i] as ActiveRepeat;
    if (a.hash === hash && a.high === high) return i;
  }
  return -1;
}

/** Per repeat (the steps at `indexes`): whether it ended as an earlier repeat did, or the log does not tell how it ended. */
function staleRepeats(steps: CallSteps, indexes: readonly number[]): boolean[] {
  const seen = new Set<number>();
  return indexes.map((at, i) => {
    const key = steps.key(at);
    const stale = key === undefined || seen.has(key);
    if (key !== undefined) seen.add(key);
    return i > 0 && stale;
  });
}

/**
 * Whether something changed strictly between steps `from` and `to`: a call ended in a way no
 * earlier step of the window did, or the agent made a call it had not made before in the window
 * and it did not fail (another edit, a new command: the workspace changed, so the repeat after it
 * is a new attempt, issue 25).
 */
function newSince(steps: CallSteps, from: number, to: number): boolean {
  const seen = new Set<number>();
  for (let i = 0; i < to; i++) {
    const key = steps.key(i);
    if (i > from) {
      if (key !== undefined && !seen.has(key)) return true;
      if (!steps.failed(i) && !madeBefore(steps, i)) return true;
    }
    if (key !== undefined) seen.add(key);
  }
  return false;
}

/** Whether the call at step `i` was made at an earlier step of the window. */
function madeBefore(steps: CallSteps, i: number): boolean {
  for (let j = 0; j < i; j++) if (steps.same(j, i)) return true;
  return false;
}
