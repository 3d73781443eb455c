import { KeyedSlots, sessionKey, type Detector, type DetectorContext, type FindingSink, type Scope, type SessionState } from '../detector';
import type { EventRef, LocatedEvent } from '../events';
import { pushEvidence, pushBounded } from '../finding';
import { episodeId, whoOf } from './common';

interface History {
  last?: string;
  readonly entries: Map<string, number>;
  readonly path: string[];
  readonly refs: EventRef[];
  episode?: string;
}

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
    let h = this.tasks.get(scope.state, e.task);
    if (!h) this.tasks.set(scope.state, e.task, (h = { entries: new Map(), path: [], refs: [] }));
    const status = e.status.toUpperCase();
    if (h.last === status) return;
    h.last = status;
    const entered = (h.entries.get(status) ?? 0) + 1;
    h.entries.set(status, entered);
    pushBounded(h.path, status, 12);
    pushEvidence(h.refs, located.ref);
    const { threshold } = this.ctx.config.signals[this.signal];
    if (entered < threshold) return;
    const episode = (h.episode ??= episodeId(this.signal, sessionKey(scope.session, e.task), located.ref));
    sink.report({ episode, action: 'halt', count: entered, evidence: h.refs }, () => ({
      signal: this.signal,
      action: 'halt',
      count: entered,
      threshold,
      at: located.ref,
      ...whoOf(scope),
      subject: `task ${e.task}: ${status}`,
      message: `Task ${e.task} entered ${status} ${entered} times: its status oscillates (${h.path.join(' → ')})`,
      recommendation: `Force task ${e.task} to BLOCKED and find the root cause (why does it keep coming back to ${status}?) before retrying.`,
      evidence: [...h.refs],
      status: 'BLOCKED',
      episode,
    }));
  }

  endSession(session: SessionState): void {
    this.tasks.deleteSession(session);
  }
}
