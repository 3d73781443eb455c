import { classifyError } from '../errorClass';
import { type Detector, type DetectorContext, type FindingSink, type Scope, type SessionState } from '../detector';
import type { AttemptEvent, LocatedEvent } from '../events';
import { Chains } from './chains';
import { whoOf } from './common';

/** The failure class of an attempt: its quality gate, else the class of its error. */
export function failureClass(e: AttemptEvent): string {
  if (e.gate !== undefined) return `gate:${e.gate}`;
  return e.error !== undefined ? classifyError(e.error) : 'unknown';
}

/** Seed 002: a task that fails `threshold` attempts in a row with the same failure class → BLOCKED. */
export class RetryExhaustionDetector implements Detector {
  readonly signal = 'retry-exhaustion' as const;
  readonly events = ['attempt'] as const;
  private readonly chains: Chains<string>;

  constructor(private readonly ctx: DetectorContext) {
    this.chains = new Chains(ctx, this.signal);
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'attempt') return;
    if (e.ok) return this.chains.end(scope.state, e.task, sink);
    const klass = failureClass(e);
    const chain = this.chains.extend(scope.state, e.task, klass, located.ref, sink);
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

  endSession(session: SessionState): void {
    this.chains.endSession(session);
  }
}
