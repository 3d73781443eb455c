import { sameCall, type SettledCall } from '../calls';
import { BoundedMap, type Detector, type DetectorContext, type FindingSink } from '../detector';
import { episodeId, pushBounded, whoOf } from './common';

/** The calls a cycle is looked for in. */
type Step = SettledCall;

interface Run {
  readonly period: number;
  readonly episode: string;
  /** Calls in the periodic run so far. */
  length: number;
}

interface SessionCycle {
  readonly steps: Step[];
  run?: Run;
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
  private readonly sessions = new BoundedMap<SessionCycle>();

  constructor(private readonly ctx: DetectorContext) {}

  call(c: SettledCall, sink: FindingSink): void {
    const { threshold, maxPeriod, history } = this.ctx.config.signals[this.signal];
    let s = this.sessions.get(c.session);
    if (!s) this.sessions.set(c.session, (s = { steps: [] }));
    pushBounded(s.steps, c, Math.max(history ?? 0, maxPeriod * threshold));
    const steps = s.steps;
    const n = steps.length;

    if (s.run) {
      const back = steps[n - 1 - s.run.period];
      if (back && sameCall(back, c)) s.run.length++;
      else {
        sink.resolve(s.run.episode);
        delete s.run;
      }
    }
    if (!s.run) {
      for (let p = 2; p * threshold <= n; p++) {
        if (isPeriodic(steps, p, p * threshold) && !isUniform(steps, p) && (p <= maxPeriod || outcomesRepeat(steps, p, p * threshold))) {
          s.run = { period: p, length: p * threshold, episode: episodeId(this.signal, c.session, (steps[n - p * threshold] as Step).ref) };
          break;
        }
      }
    }
    const run = s.run;
    if (!run) return;
    const { period } = run;
    const reps = Math.floor(Math.min(run.length, n) / period);
    const span = steps.slice(n - reps * period);
    const progress = unitsProgress(span, period);
    const unit = span.slice(-period).map((x) => x.tool).join(' → ');
    const count = Math.floor(run.length / period);
    sink.report({ episode: run.episode, action: progress ? 'warn' : 'halt', count: count, evidence: span.map((x) => x.ref) }, () => ({
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
      evidence: span.map((x) => x.ref),
      ...(progress ? {} : { status: 'STALLED' as const }),
      episode: run.episode,
    }));
  }

  endSession(session: string): void {
    this.sessions.delete(session);
  }
}

function isPeriodic(steps: readonly Step[], period: number, span: number): boolean {
  const n = steps.length;
  for (let i = n - span + period; i < n; i++) {
    if (!sameCall(steps[i] as Step, steps[i - period] as Step)) return false;
  }
  return true;
}

/** A unit made of one call repeated is identical-calls' business, not a cycle. */
function isUniform(steps: readonly Step[], period: number): boolean {
  const n = steps.length;
  const first = steps[n - period] as Step;
  for (let i = n - period + 1; i < n; i++) if (!sameCall(steps[i] as Step, first)) return false;
  return true;
}

/** Every call of the last `span` has a known outcome, the same as the call one period before it. */
function outcomesRepeat(steps: readonly Step[], period: number, span: number): boolean {
  const n = steps.length;
  for (let i = n - span; i < n; i++) {
    const key = (steps[i] as Step).outcome.key;
    if (key === undefined) return false;
    if (i >= n - span + period && key !== (steps[i - period] as Step).outcome.key) return false;
  }
  return true;
}

/**
 * Progress when every call's outcome is known and no two rounds ended the same (an edit→test
 * round whose failure changes is moving, issue 9).
 */
function unitsProgress(span: readonly Step[], period: number): boolean {
  const seen = new Set<string>();
  for (let i = 0; i < span.length; i += period) {
    const parts: number[] = [];
    for (const step of span.slice(i, i + period)) {
      const key = step.outcome.key;
      if (key === undefined) return false;
      parts.push(key);
    }
    const key = parts.join(',');
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return seen.size > 0;
}
