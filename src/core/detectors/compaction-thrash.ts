import type { SettledCall } from '../calls';
import { clip } from '../canonical';
import type { Detector, DetectorContext, FindingSink, Scope, SessionSlot, SessionState } from '../detector';
import type { EventRef, LocatedEvent } from '../events';
import { pushEvidence } from '../finding';
import { sayCall } from '../plainWords';
import { episodeId, whoOf } from './common';

/** Calls a window between two compactions may hold and still be compared: past it, the work is taken as new. */
const MAX_WINDOW = 200;

/** A session's compactions and the work after each. */
interface Thrash {
  /** Whether the session has compacted: the work before the first compaction is no window. */
  compacted: boolean;
  /** The work since the latest compaction: each call as its signature's hash and its outcome's, in order. */
  window: string[];
  /** The window after the compaction before, sorted (the same calls in any order are the same work). */
  previous?: string;
  /** Whether the current window has already matched the previous one (it counts once). */
  matched: boolean;
  /** Windows in a row, each the same work as the one before (the first of them counts 1). */
  run: number;
  refs: EventRef[];
  /** The latest compaction, and the first call of the window after it (which names the work). */
  compaction?: EventRef;
  first?: SettledCall;
  episode?: string;
}

function fresh(): Thrash {
  return { compacted: false, window: [], matched: false, run: 0, refs: [] };
}

/**
 * Issue 34: compaction thrash. An agent compacts its context (a step of the session, as a prompt
 * is: `compaction` events), then makes the same calls that got the same answers before the last
 * compaction, and compacts again: nothing it does between compactions changes anything, and the
 * loop runs above the tool calls (each batch may hold no repeated call of its own).
 *
 * The work after a compaction is its calls with their outcomes (the answer's hash: an identical
 * "Error: No active project" inside a result not marked as an error is the same answer); two
 * windows are the same work when they hold the same calls with the same outcomes, in any order. A
 * window that is the same work as the window before counts one more cycle (the first counts one);
 * any other window starts the count again, and a window without calls neither counts nor breaks
 * it. Warn at `warnAt` (2) cycles, halt at `threshold` (3). A long session that compacts several
 * times while doing different work never repeats a window. A person's turn ends the count.
 */
export class CompactionThrashDetector implements Detector {
  readonly signal = 'compaction-thrash' as const;
  readonly events = ['compaction'] as const;
  private readonly state: SessionSlot<Thrash>;

  constructor(private readonly ctx: DetectorContext) {
    this.state = ctx.slot(fresh);
  }

  call(c: SettledCall, sink: FindingSink): void {
    const t = this.state.peek(c.sessionState);
    if (t === undefined || !t.compacted || t.window.length > MAX_WINDOW) return;
    t.first ??= c;
    t.window.push(`${c.signatureHash}:${c.outcome.kind === 'unknown' ? '?' : String(c.outcome.key)}`);
    pushEvidence(t.refs, c.ref);
    if (t.matched || t.previous === undefined || t.window.length !== t.previous.split('\n').length) return;
    if (sorted(t.window) !== t.previous) return;
    // The same work as after the compaction before: one more cycle.
    t.matched = true;
    t.run++;
    this.check(t, c.settledAt, whoOf(c), sink);
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    if (located.event.type !== 'compaction') return;
    const t = this.state.of(scope.state);
    if (t.compacted && t.window.length > 0) {
      const work = t.window.length > MAX_WINDOW ? undefined : sorted(t.window);
      if (work === undefined || work !== t.previous) {
        // Different work (or more than the same): the count starts again with this window.
        if (t.episode !== undefined) sink.resolve(t.episode);
        t.episode = undefined;
        t.run = 1;
        t.refs = t.refs.slice(-(t.window.length + 1));
      } else if (!t.matched) t.run++;
      t.previous = work;
    }
    t.compacted = true;
    t.window = [];
    t.matched = false;
    t.first = undefined;
    t.compaction = located.ref;
    pushEvidence(t.refs, located.ref);
  }

  private check(t: Thrash, at: EventRef, who: ReturnType<typeof whoOf>, sink: FindingSink): void {
    const { threshold, warnAt } = this.ctx.config.signals[this.signal];
    if (t.run < Math.min(warnAt, threshold)) return;
    const action = t.run >= threshold ? ('halt' as const) : ('warn' as const);
    const start = t.refs[0] ?? at;
    const episode = (t.episode ??= episodeId(this.signal, who.session, start));
    const calls = t.window.length;
    const first = t.first;
    const what = first !== undefined ? sayCall(first.tool, first.args) : 'the same calls';
    sink.report({ episode, action, count: t.run, evidence: t.refs }, () => ({
      signal: this.signal,
      action,
      count: t.run,
      threshold,
      at,
      ...who,
      subject: clip(what, 160),
      message: `The context was compacted ${t.run} times in a row, and after each compaction the same ${calls === 1 ? 'call was' : `${calls} calls were`} made again with the same answers (${clip(what, 100)}${calls > 1 ? ', …' : ''}): the work between compactions changes nothing`,
      recommendation:
        'Compacting and re-issuing the same calls goes round the same circle: the answers will not change. Read the answer the calls get (an error inside a result is still an error), fix its cause or stop; do not compact and retry.',
      evidence: [...t.refs],
      ...(action === 'halt' ? { status: 'STALLED' as const } : {}),
      episode,
      details: { compactions: t.run, calls_per_cycle: calls },
    }));
  }

  endSession(session: SessionState): void {
    this.state.clear(session);
  }
}

function sorted(window: readonly string[]): string {
  return [...window].sort().join('\n');
}
