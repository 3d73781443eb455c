import { callSignature, outcomeKey, outcomeOf, UNKNOWN, type Outcome, type SettledCall } from './calls';
import { Canonicalizer } from './canonical';
import type { GuardianConfig, SignalId } from './config';
import type { Detector, DetectorContext, EpisodeState, FindingSink, Scope } from './detector';
import { createDetectors } from './detectors';
import { timestampMs } from './eventTime';
import type { EventRef, LocatedEvent, ToolEvent } from './events';
import { severity, type Finding } from './finding';

/** A call that waits for its `tool_result` waits behind at most this many later calls. */
export const MAX_PENDING = 8;

interface QueuedCall {
  readonly base: Omit<SettledCall, 'outcome' | 'settledAt'>;
  readonly id?: string;
  outcome?: Outcome;
  settledAt?: EventRef;
}

interface ActiveEpisode {
  readonly finding: Finding;
  /** The latest report: the count and evidence go on growing while the pattern lasts. */
  state: EpisodeState;
  /** Makes the finding as of the latest report at the finding's action: its words then agree with its count. */
  make?: () => Finding;
}

export interface EngineStats {
  events: number;
  calls: number;
  /** `tool_result` events whose call was never seen or had already been settled. */
  unmatchedResults: number;
}

export function scopeOf(located: LocatedEvent): Scope {
  const e = located.event;
  return { session: e.session ?? located.ref.file, at: located.ref, task: e.task, agent: e.agent };
}

/**
 * Events in, findings out. Routes each event to every enabled detector, pairs calls with their
 * results, restarts a session's counters at a `user` event (but those of the signals that span
 * turns), and keeps the active findings.
 */
export class Engine {
  readonly stats: EngineStats = { events: 0, calls: 0, unmatchedResults: 0 };
  private readonly ctx: DetectorContext;
  private readonly detectors: readonly Detector[];
  private readonly queues = new Map<string, QueuedCall[]>();
  private readonly waiting = new Map<string, QueuedCall>();
  private readonly activeFindings = new Map<string, ActiveEpisode>();
  private emitted: Finding[] = [];
  private readonly exempt: ReadonlySet<string>;
  /** The signals whose patterns span the person's turns: a `user` event does not end their findings. */
  private readonly spanning: ReadonlySet<SignalId>;
  /** Per session: the outcomes seen lately, and the latest call that ended in a way none of them did. */
  private readonly news = new Map<string, { seen: Set<string>; last?: SettledCall }>();
  private readonly sink: FindingSink = {
    report: (state, make) => this.report(state, make),
    resolve: (episode) => this.activeFindings.delete(episode),
  };

  constructor(readonly config: GuardianConfig) {
    this.ctx = { config, canon: new Canonicalizer(config.volatileKeys, config.volatileArgs) };
    this.detectors = createDetectors(this.ctx).filter((d) => config.signals[d.signal].enabled);
    this.spanning = new Set(this.detectors.filter((d) => d.spansTurns).map((d) => d.signal));
    // Waiting on a running process (`waitTools`) is not repeating oneself: both are left out.
    this.exempt = new Set([...config.exemptTools, ...config.waitTools]);
  }

  /** Feeds one event; returns the findings it raised (new, or more severe than before). */
  push(located: LocatedEvent): Finding[] {
    this.stats.events++;
    const scope = scopeOf(located);
    const e = located.event;
    switch (e.type) {
      case 'tool':
        this.onTool(e, located.ref, scope);
        break;
      case 'tool_result': {
        const queued = this.waiting.get(waitKey(scope.session, e.id));
        if (!queued) {
          this.stats.unmatchedResults++;
          break;
        }
        this.waiting.delete(waitKey(scope.session, e.id));
        queued.outcome = outcomeOf(e, this.ctx.canon) ?? UNKNOWN;
        queued.settledAt = located.ref;
        this.release(scope.session, false);
        break;
      }
      case 'user':
        this.release(scope.session, true);
        for (const d of this.detectors) if (!d.spansTurns) d.endSession(scope.session);
        for (const [episode, a] of this.activeFindings) {
          if (a.finding.session === scope.session && !this.spanning.has(a.finding.signal)) this.activeFindings.delete(episode);
        }
        break;
      default:
        for (const d of this.detectors) d.event?.(located, scope, this.sink);
    }
    return this.take();
  }

  /** Settles every call still waiting for a result (end of a replay). */
  flush(): Finding[] {
    for (const session of [...this.queues.keys()]) this.release(session, true);
    return this.take();
  }

  /**
   * Findings whose pattern is still going on, most severe first, as of their latest event: the
   * count, the evidence, and the message that says that count (the action stays the one raised).
   */
  active(): Finding[] {
    return [...this.activeFindings.values()]
      .map((a) => {
        const now = a.make?.();
        const words = now && now.action === a.finding.action ? { at: now.at, message: now.message, recommendation: now.recommendation, ...(now.details ? { details: now.details } : {}) } : {};
        return { ...a.finding, ...words, count: a.state.count, evidence: [...a.state.evidence] };
      })
      .sort((a, b) => severity(b.action) - severity(a.action));
  }

  private onTool(e: ToolEvent, ref: EventRef, scope: Scope): void {
    if (this.exempt.has(e.tool)) return;
    this.stats.calls++;
    const args = this.ctx.canon.args(e.tool, e.args ?? {});
    const base = {
      ref,
      tool: e.tool,
      args,
      signature: callSignature(e.tool, args),
      session: scope.session,
      task: scope.task,
      agent: scope.agent,
      ts: timestampMs(e),
    };
    const outcome = outcomeOf(e, this.ctx.canon);
    let queue = this.queues.get(scope.session);
    if (!queue && (outcome !== undefined || e.id === undefined)) {
      // Nothing waits ahead of it: judge it now.
      this.dispatch({ ...base, outcome: outcome ?? UNKNOWN, settledAt: ref });
      return;
    }
    const queued: QueuedCall = { base, ...(e.id !== undefined ? { id: e.id } : {}) };
    if (outcome !== undefined || e.id === undefined) {
      queued.outcome = outcome ?? UNKNOWN;
      queued.settledAt = ref;
    } else {
      this.waiting.set(waitKey(scope.session, e.id), queued);
    }
    if (!queue) this.queues.set(scope.session, (queue = []));
    queue.push(queued);
    // A call whose result never comes must not hold back detection for ever.
    this.release(scope.session, false, queue.length > MAX_PENDING ? queue.length - MAX_PENDING : 0);
  }

  /**
   * The latest call of the session that ended in a way no call of the session had ended lately (a
   * read that returned the file, a search that found something new): the agent did something.
   */
  lastNews(session: string): SettledCall | undefined {
    return this.news.get(session)?.last;
  }

  private dispatch(call: SettledCall): void {
    const key = outcomeKey(call.outcome);
    if (key !== undefined) {
      let n = this.news.get(call.session);
      if (!n) {
        this.news.set(call.session, (n = { seen: new Set() }));
        if (this.news.size > 1000) this.news.delete(this.news.keys().next().value as string);
      }
      if (!n.seen.has(key)) {
        n.last = call;
        n.seen.add(key);
        if (n.seen.size > 500) n.seen.delete(n.seen.values().next().value as string);
      }
    }
    for (const d of this.detectors) d.call?.(call, this.sink);
  }

  /** Dispatches settled calls in call order; `force` settles the waiting ones as unrecorded. */
  private release(session: string, force: boolean, forceFirst = 0): void {
    const queue = this.queues.get(session);
    if (!queue) return;
    let forced = forceFirst;
    while (queue.length > 0) {
      const head = queue[0] as QueuedCall;
      if (head.outcome === undefined) {
        if (!force && forced <= 0) break;
        forced--;
        if (head.id !== undefined) this.waiting.delete(waitKey(session, head.id));
        head.outcome = UNKNOWN;
        head.settledAt = queue[queue.length - 1]?.base.ref ?? head.base.ref;
      }
      queue.shift();
      this.dispatch({ ...head.base, outcome: head.outcome, settledAt: head.settledAt ?? head.base.ref });
    }
    if (queue.length === 0) this.queues.delete(session);
  }

  private report(state: EpisodeState, make: () => Finding): void {
    const before = this.activeFindings.get(state.episode);
    if (!before || severity(state.action) > severity(before.finding.action)) {
      const finding = make();
      this.activeFindings.set(state.episode, { finding, state });
      this.emitted.push(finding);
    } else {
      before.state = state;
      if (state.action === before.finding.action) before.make = make;
    }
  }

  private take(): Finding[] {
    const out = this.emitted;
    if (out.length > 0) this.emitted = [];
    return out;
  }
}

/**
 * Where a session last made progress: its latest call that succeeded in a way none of its calls
 * had lately. A loop whose evidence ends before it is over.
 */
export function progressOf(engine: Engine, session: string): EventRef | undefined {
  const news = engine.lastNews(session);
  return news?.outcome.kind === 'ok' ? news.ref : undefined;
}

function waitKey(session: string, id: string): string {
  return `${session}\u0000${id}`;
}
