import type { SettledCall } from '../calls';
import type { Detector, DetectorContext, FindingSink, SessionSlot, SessionState } from '../detector';
import type { EventRef } from '../events';
import { episodeId, whoOf } from './common';

/**
 * A session's last calls, oldest first, as much of each as a cycle needs: its signature's hash,
 * tool, event and outcome key. Kept in columns that are written over, not as the calls
 * themselves: the history is long (60 calls per session), and keeping whole calls that long made
 * most of a replay's garbage-collection work. Steps are compared by their hashes alone (the text
 * of a call is written only when something reads it): two different calls share a hash once in
 * 2^30 comparisons, and a cycle needs every one of (threshold - 1) × period comparisons, at least
 * four, to hold at once; a chance match can only lengthen a cycle already found by one step, or
 * hide one (a miss, never a false halt).
 */
class Steps {
  private readonly tools: string[] = [];
  private readonly refs: EventRef[] = [];
  private readonly hashes: Float64Array;
  /** Each outcome's key; NaN where the log does not tell how the call ended. */
  private readonly keys: Float64Array;
  private first = 0;
  length = 0;

  constructor(private readonly capacity: number) {
    this.hashes = new Float64Array(capacity);
    this.keys = new Float64Array(capacity);
  }

  push(c: SettledCall): void {
    const at = (this.first + this.length) % this.capacity;
    if (this.length === this.capacity) this.first = (this.first + 1) % this.capacity;
    else this.length++;
    this.tools[at] = c.tool;
    this.refs[at] = c.ref;
    this.hashes[at] = c.signatureHash;
    this.keys[at] = c.outcome.key ?? Number.NaN;
  }

  private slot(i: number): number {
    return (this.first + i) % this.capacity;
  }

  /** Whether steps `i` and `j` (0: the oldest) are the same call. */
  same(i: number, j: number): boolean {
    const a = this.slot(i);
    const b = this.slot(j);
    return this.hashes[a] === this.hashes[b];
  }

  /**
   * Whether the latest step is the same call as one of the steps `from` to `to` back (a cycle of
   * period p ends with the call p steps back): most calls repeat none of their recent ones, and the
   * search for a period then stops here.
   */
  latestRepeats(from: number, to: number): boolean {
    const last = this.slot(this.length - 1);
    const hash = this.hashes[last];
    for (let back = from; back <= to && back < this.length; back++) {
      const at = this.slot(this.length - 1 - back);
      if (this.hashes[at] === hash) return true;
    }
    return false;
  }

  /** Step `i`'s outcome key, undefined when the log does not tell. */
  key(i: number): number | undefined {
    const k = this.keys[this.slot(i)] as number;
    return Number.isNaN(k) ? undefined : k;
  }

  tool(i: number): string {
    return this.tools[this.slot(i)] as string;
  }

  ref(i: number): EventRef {
    return this.refs[this.slot(i)] as EventRef;
  }
}

interface Run {
  readonly period: number;
  readonly episode: string;
  /** Calls in the periodic run so far. */
  length: number;
}

interface SessionCycle {
  readonly steps: Steps;
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

  constructor(private readonly ctx: DetectorContext) {
    const { threshold, maxPeriod, history } = ctx.config.signals[this.signal];
    this.sessions = ctx.slot(() => ({ steps: new Steps(Math.max(history ?? 0, maxPeriod * threshold)), run: undefined }));
  }

  call(c: SettledCall, sink: FindingSink): void {
    const { threshold, maxPeriod } = this.ctx.config.signals[this.signal];
    const s = this.sessions.of(c.sessionState);
    const steps = s.steps;
    steps.push(c);
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
    this.sessions.clear(session);
  }
}

function isPeriodic(steps: Steps, period: number, span: number): boolean {
  const n = steps.length;
  for (let i = n - span + period; i < n; i++) {
    if (!steps.same(i, i - period)) return false;
  }
  return true;
}

/** A unit made of one call repeated is identical-calls' business, not a cycle. */
function isUniform(steps: Steps, period: number): boolean {
  const n = steps.length;
  for (let i = n - period + 1; i < n; i++) if (!steps.same(i, n - period)) return false;
  return true;
}

/** Every call of the last `span` has a known outcome, the same as the call one period before it. */
function outcomesRepeat(steps: Steps, period: number, span: number): boolean {
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
function unitsProgress(steps: Steps, from: number, period: number): boolean {
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
