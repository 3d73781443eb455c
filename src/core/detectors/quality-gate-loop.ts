import { clip } from '../canonical';
import { telltaleLine } from '../errorLines';
import { type Detector, type DetectorContext, type FindingSink, type Scope, type SessionState } from '../detector';
import type { LocatedEvent } from '../events';
import { Chains } from './chains';
import { whoOf } from './common';

/** Seed 003: the same quality-gate check fails on `threshold` (2) attempts in a row → circuit break. */
export class QualityGateLoopDetector implements Detector {
  readonly signal = 'quality-gate-loop' as const;
  readonly events = ['attempt'] as const;
  private readonly chains: Chains<string>;

  constructor(private readonly ctx: DetectorContext) {
    this.chains = new Chains(ctx, this.signal);
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'attempt') return;
    if (e.ok || e.gate === undefined) return this.chains.end(scope.state, e.task, sink);
    const chain = this.chains.extend(scope.state, e.task, e.gate, located.ref, sink);
    const { threshold } = this.ctx.config.signals[this.signal];
    if (chain.count < threshold) return;
    sink.report({ episode: chain.episode, action: 'halt', count: chain.count, evidence: chain.refs }, () => ({
      signal: this.signal,
      action: 'halt',
      count: chain.count,
      threshold,
      at: located.ref,
      ...whoOf(scope),
      subject: `task ${e.task}: gate ${e.gate}`,
      message: `Quality gate "${e.gate}" failed ${chain.count} attempts in a row for task ${e.task}${e.error ? `: ${clip(telltaleLine(e.error), 120)}` : ''}`,
      recommendation: `The quality-gate failure is fundamental, not a retry issue: circuit-break task ${e.task} and have a person fix the underlying check (or its configuration).`,
      evidence: [...chain.refs],
      status: 'BLOCKED',
      episode: chain.episode,
    }));
  }

  endSession(session: SessionState): void {
    this.chains.endSession(session);
  }
}
