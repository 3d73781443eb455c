import { classifyError } from '../errorClass';
import { BoundedMap, inSession, sessionKey, type Detector, type DetectorContext, type FindingSink, type Scope } from '../detector';
import type { AttemptEvent, EventRef, LocatedEvent } from '../events';
import { pushEvidence } from '../finding';
import { episodeId, whoOf } from './common';

interface Chain {
  readonly failureClass: string;
  count: number;
  readonly episode: string;
  readonly refs: EventRef[];
}

/** The failure class of an attempt: its quality gate, else the class of its error. */
export function failureClass(e: AttemptEvent): string {
  if (e.gate !== undefined) return `gate:${e.gate}`;
  return e.error !== undefined ? classifyError(e.error) : 'unknown';
}

/** Seed 002: a task that fails `threshold` attempts in a row with the same failure class → BLOCKED. */
export class RetryExhaustionDetector implements Detector {
  readonly signal = 'retry-exhaustion' as const;
  private readonly chains = new BoundedMap<Chain>();

  constructor(private readonly ctx: DetectorContext) {}

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'attempt') return;
    const key = sessionKey(scope.session, e.task);
    let chain = this.chains.get(key);
    if (e.ok) {
      if (chain) sink.resolve(chain.episode);
      this.chains.delete(key);
      return;
    }
    const klass = failureClass(e);
    if (!chain || chain.failureClass !== klass) {
      if (chain) sink.resolve(chain.episode);
      chain = { failureClass: klass, count: 0, episode: episodeId(this.signal, key, located.ref), refs: [] };
      this.chains.set(key, chain);
    }
    chain.count++;
    pushEvidence(chain.refs, located.ref);
    const { threshold } = this.ctx.config.signals[this.signal];
    if (chain.count < threshold) return;
    sink.report({ episode: chain.episode, action: 'halt', count: chain.count, evidence: chain.refs }, () => ({
      signal: this.signal,
      action: 'halt',
      count: chain.count,
      threshold,
      at: located.ref,
      ...whoOf(scope),
      subject: `task ${e.task}: ${klass}`,
      message: `Task ${e.task} failed ${chain.count} attempts in a row with the same failure class (${klass}): retries are exhausted`,
      recommendation: `Stop retrying task ${e.task}: mark it BLOCKED (loop-guardian break ${e.task}) and escalate to a human if the cause cannot be fixed.`,
      evidence: [...chain.refs],
      status: 'BLOCKED',
      episode: chain.episode,
    }));
  }

  endSession(session: string): void {
    this.chains.deleteWhere((key) => inSession(key, session));
  }
}
