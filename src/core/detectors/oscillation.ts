import { KeyedSlots, sessionKey, type Detector, type DetectorContext, type FindingSink, type Scope, type SessionState } from '../detector';
import type { EventRef, LocatedEvent } from '../events';
import { pushEvidence, pushBounded } from '../finding';
import { episodeId, whoOf } from './common';

/**
 * A task's statuses. Most tasks enter one or two and are done: the counts, path and evidence are
 * kept from the task's second status on (a task's state lives until the task is forgotten, so what
 * it holds is what the signal costs).
 */
interface History {
  last: string;
  /** Its first status's event, until the rest is kept. */
  first?: EventRef;
  more?: {
    /** How often it entered each status: statuses and counts side by side (a task sees few). */
    readonly statuses: string[];
    readonly counts: number[];
    readonly path: string[];
    readonly refs: EventRef[];
    episode?: string;
  };
}

/** Statuses counted per task. */
const MAX_STATUSES = 64;

/**
 * Seed 002: a task's status keeps coming back (IN_PROGRESS → REVIEW → REJECTED → IN_PROGRESS …):
 * when the task enters the same status for the `threshold`-th time, it is oscillating → BLOCKED.
 */
export class OscillationDetector implements Detector {
  readonly signal = 'oscillation' as const;
  readonly events = ['status'] as const;
  private readonly tasks: KeyedSlots<History>;

  constructor(private readonly ctx: DetectorContext) {
    this.tasks = new KeyedSlots(ctx);
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'status') return;
    const status = e.status.toUpperCase();
    const h = this.tasks.get(scope.state, e.task);
    if (!h) {
      this.tasks.set(scope.state, e.task, { last: status, first: located.ref });
      return;
    }
    if (h.last === status) return;
    let m = h.more;
    if (m === undefined) {
      m = h.more = { statuses: [h.last], counts: [1], path: [h.last], refs: [h.first as EventRef] };
      h.first = undefined;
    }
    h.last = status;
    const at = m.statuses.indexOf(status);
    const entered = at < 0 ? 1 : (m.counts[at] as number) + 1;
    if (at >= 0) m.counts[at] = entered;
    else {
      m.statuses.push(status);
      m.counts.push(1);
      // A task of endless new statuses (no workflow has that many) forgets the earliest.
      if (m.statuses.length > MAX_STATUSES) {
        m.statuses.shift();
        m.counts.shift();
      }
    }
    pushBounded(m.path, status, 12);
    pushEvidence(m.refs, located.ref);
    const { threshold } = this.ctx.config.signals[this.signal];
    if (entered < threshold) return;
    const more = m;
    const episode = (m.episode ??= episodeId(this.signal, sessionKey(scope.session, e.task), located.ref));
    sink.report({ episode, action: 'halt', count: entered, evidence: m.refs }, () => ({
      signal: this.signal,
      action: 'halt',
      count: entered,
      threshold,
      at: located.ref,
      ...whoOf(scope),
      subject: `task ${e.task}: ${status}`,
      message: `Task ${e.task} entered ${status} ${entered} times: its status oscillates (${more.path.join(' → ')})`,
      recommendation: `Force task ${e.task} to BLOCKED and find the root cause (why does it keep coming back to ${status}?) before retrying.`,
      evidence: [...more.refs],
      status: 'BLOCKED',
      episode,
    }));
  }

  endSession(session: SessionState): void {
    this.tasks.deleteSession(session);
  }
}
