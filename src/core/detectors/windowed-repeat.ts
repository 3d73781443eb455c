import { describeCall, isProgress, outcomeKey, type Outcome, type SettledCall } from '../calls';
import { adviceForCall } from '../advice';
import { BoundedMap, type Detector, type DetectorContext, type FindingSink } from '../detector';
import type { EventRef } from '../events';
import { episodeId, pushBounded, whoOf } from './common';

interface Step {
  readonly signature: string;
  readonly ref: EventRef;
  readonly outcome: Outcome;
}

interface SessionWindow {
  readonly steps: Step[];
  /** signature → episode of a repeat that is at or above the threshold */
  readonly active: Map<string, string>;
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
 *   the calls in between still bring new results (edits that change, searches that find more).
 */
export class WindowedRepeatDetector implements Detector {
  readonly signal = 'windowed-repeat' as const;
  private readonly sessions = new BoundedMap<SessionWindow>();

  constructor(private readonly ctx: DetectorContext) {}

  call(c: SettledCall, sink: FindingSink): void {
    const { threshold, window } = this.ctx.config.signals[this.signal];
    let s = this.sessions.get(c.session);
    if (!s) this.sessions.set(c.session, (s = { steps: [], active: new Map() }));
    pushBounded(s.steps, { signature: c.signature, ref: c.ref, outcome: c.outcome }, window);

    for (const [signature, episode] of s.active) {
      if (signature !== c.signature && countOf(s.steps, signature) < threshold) {
        sink.resolve(episode);
        s.active.delete(signature);
      }
    }
    const indexes: number[] = [];
    s.steps.forEach((step, i) => step.signature === c.signature && indexes.push(i));
    if (indexes.length < threshold) {
      const episode = s.active.get(c.signature);
      if (episode !== undefined) sink.resolve(episode);
      s.active.delete(c.signature);
      return;
    }
    const outcomes = indexes.map((i) => (s.steps[i] as Step).outcome);
    const backToBack = (indexes[indexes.length - 1] as number) - (indexes[0] as number) === indexes.length - 1;
    const identical = this.ctx.config.signals['identical-calls'];
    // Back-to-back repeats are identical-calls' to report: one loop, one alarm.
    if (backToBack && identical.enabled && indexes.length >= identical.threshold) return;
    let progress: boolean;
    if (backToBack) progress = isProgress(outcomes);
    else {
      const stale = staleRepeats(outcomes);
      if (!stale[stale.length - 1] || stale.filter(Boolean).length < threshold - 1) {
        // Moving on: recovery, changing results, or a single unchanged check.
        const episode = s.active.get(c.signature);
        if (episode !== undefined) sink.resolve(episode);
        s.active.delete(c.signature);
        return;
      }
      progress = newSince(s.steps, indexes[indexes.length - 2] as number, indexes[indexes.length - 1] as number);
    }
    let episode = s.active.get(c.signature);
    if (episode === undefined) {
      episode = episodeId(this.signal, c.session, (s.steps[indexes[0] as number] as Step).ref);
      s.active.set(c.signature, episode);
    }
    const subject = describeCall(c.tool, c.args);
    sink.report({ episode: episode, action: progress ? 'warn' : 'halt', count: indexes.length, evidence: indexes.map((i) => (s.steps[i] as Step).ref) }, () => ({
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
      evidence: indexes.map((i) => (s.steps[i] as Step).ref),
      ...(progress ? {} : { status: 'STALLED' as const }),
      episode,
    }));
  }

  endSession(session: string): void {
    this.sessions.delete(session);
  }
}

/** Per repeat: whether it ended as an earlier repeat did, or the log does not tell how it ended. */
function staleRepeats(outcomes: readonly Outcome[]): boolean[] {
  const seen = new Set<string>();
  return outcomes.map((o, i) => {
    const key = outcomeKey(o);
    const stale = key === undefined || seen.has(key);
    if (key !== undefined) seen.add(key);
    return i > 0 && stale;
  });
}

/** Whether a call strictly between steps `from` and `to` ended in a way no earlier step of the window did. */
function newSince(steps: readonly Step[], from: number, to: number): boolean {
  const seen = new Set<string>();
  for (let i = 0; i < to; i++) {
    const key = outcomeKey((steps[i] as Step).outcome);
    if (i > from && key !== undefined && !seen.has(key)) return true;
    if (key !== undefined) seen.add(key);
  }
  return false;
}

function countOf(steps: readonly Step[], signature: string): number {
  let n = 0;
  for (const s of steps) if (s.signature === signature) n++;
  return n;
}
