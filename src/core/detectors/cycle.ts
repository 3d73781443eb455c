import type { SettledCall } from '../calls';
import type { Detector, DetectorContext, FindingSink, SessionSlot, SessionState } from '../detector';
import { episodeId, whoOf } from './common';
import { CallSteps } from './steps';

interface Run {
  readonly period: number;
  readonly episode: string;
  /** Calls in the periodic run so far. */
  length: number;
}

/**
 * A session's cycle going on. Its last calls (`history`, 60 by default) are the session's window
 * (`SessionState.steps`). Steps are compared by their ids alone: a cycle needs every one of
 * (threshold - 1) × period comparisons, at least four, to hold at once.
 */
interface SessionCycle {
  run: Run | undefined;
}

/**
 * A-B-A-B and longer cycles (seed 001's future work; a peer's loop detector ships it): the last
 * period × threshold calls are one unit of 2..maxPeriod different calls repeated `threshold`
 * times. Longer units, up to what the kept `history` holds (issue 9: a six-call cycle ran until
 * the agent's cost limit), count only when every call's outcome is known and every round ended
 * exactly as the one before: a long unit that merely recurs is too often ordinary work.
 * Progress-aware: a cycle whose rounds end differently from each other only warns.
 */
export class CycleDetector implements Detector {
  readonly signal = 'cycle' as const;
  private readonly sessions: SessionSlot<SessionCycle>;
  /** The session's last calls (as many as `history` says), for the length of one call. */
  private readonly latest = new CallSteps(0);
  /** How many of the session's last calls it reads. */
  private readonly reads: number;

  constructor(private readonly ctx: DetectorContext) {
    const { threshold, maxPeriod, history } = ctx.config.signals[this.signal];
    const length = Math.max(history ?? 0, maxPeriod * threshold);
    ctx.window(this.signal, length, true);
    this.reads = length;
    this.sessions = ctx.slot(() => ({ run: undefined }));
  }

  call(c: SettledCall, sink: FindingSink): void {
    const { threshold, maxPeriod } = this.ctx.config.signals[this.signal];
    const s = this.sessions.of(c.sessionState);
    const steps = this.latest.readLatest(c.sessionState.steps as CallSteps, this.reads);
    const n = steps.length;

    if (s.run) {
      if (n - 1 - s.run.period >= 0 && steps.same(n - 1 - s.run.period, n - 1)) s.run.length++;
      else {
        sink.resolve(s.run.episode);
        s.run = undefined;
      }
    }
    if (!s.run && steps.latestRepeats(2, Math.floor(n / threshold))) {
      for (let p = 2; p * threshold <= n; p++) {
        if (isPeriodic(steps, p, p * threshold) && !isUniform(steps, p) && (p <= maxPeriod || outcomesRepeat(steps, p, p * threshold))) {
          s.run = { period: p, length: p * threshold, episode: episodeId(this.signal, c.session, steps.ref(n - p * threshold)) };
          break;
        }
      }
    }
    const run = s.run;
    if (!run) return;
    const { period } = run;
    const reps = Math.floor(Math.min(run.length, n) / period);
    const from = n - reps * period;
    const progress = unitsProgress(steps, from, period);
    const unit = Array.from({ length: period }, (_, i) => steps.tool(n - period + i)).join(' → ');
    const count = Math.floor(run.length / period);
    const evidence = Array.from({ length: n - from }, (_, i) => steps.ref(from + i));
    sink.report({ episode: run.episode, action: progress ? 'warn' : 'halt', count: count, evidence }, () => ({
      signal: this.signal,
      action: progress ? 'warn' : 'halt',
      count,
      threshold,
      at: c.settledAt,
      ...whoOf(c),
      subject: `${unit} (period ${period})`,
      message: progress
        ? `The cycle ${unit} repeated ${count} times, but every round succeeded with new results`
        : `Stuck in a cycle: ${unit} repeated ${count} times with the same arguments and no progress`,
      recommendation: progress
        ? 'The cycle is still producing new results; make sure it has an end condition.'
        : `The agent is going round in circles (${unit}). Stop, look at why the last step does not change the outcome, and take a different step, or ask the user.`,
      evidence: [...evidence],
      ...(progress ? {} : { status: 'STALLED' as const }),
      episode: run.episode,
    }));
  }

  endSession(session: SessionState): void {
    // The session's window is emptied by the engine (kept for the session's next turn).
    const s = this.sessions.peek(session);
    if (s !== undefined) s.run = undefined;
  }
}

function isPeriodic(steps: CallSteps, period: number, span: number): boolean {
  const n = steps.length;
  for (let i = n - span + period; i < n; i++) {
    if (!steps.same(i, i - period)) return false;
  }
  return true;
}

/** A unit made of one call repeated is identical-calls' business, not a cycle. */
function isUniform(steps: CallSteps, period: number): boolean {
  const n = steps.length;
  for (let i = n - period + 1; i < n; i++) if (!steps.same(i, n - period)) return false;
  return true;
}

/** Every call of the last `span` has a known outcome, the same as the call one period before it. */
function outcomesRepeat(steps: CallSteps, period: number, span: number): boolean {
  const n = steps.length;
  for (let i = n - span; i < n; i++) {
    const key = steps.key(i);
    if (key === undefined) return false;
    if (i >= n - span + period && key !== steps.key(i - period)) return false;
  }
  return true;
}

/**
 * Progress when every call's outcome is known and no two rounds ended the same (an edit→test
 * round whose failure changes is moving, issue 9). The rounds are the steps from `from` on.
 */
function unitsProgress(steps: CallSteps, from: number, period: number): boolean {
  const seen = new Set<string>();
  for (let i = from; i < steps.length; i += period) {
    const parts: number[] = [];
    for (let j = i; j < Math.min(i + period, steps.length); j++) {
      const key = steps.key(j);
      if (key === undefined) return false;
      parts.push(key);
    }
    const key = parts.join(',');
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return seen.size > 0;
}
