import { type Detector, type DetectorContext, type FindingSink, type Scope, type SessionState } from '../detector';
import type { LocatedEvent } from '../events';
import { Chains } from './chains';
import { whoOf } from './common';

/**
 * Seed 003: `threshold` failed attempts of a task without a tier change → force-escalate
 * (+2 tiers); from the human-review tier on, escalation is over: halt for a person.
 */
export class StuckTierDetector implements Detector {
  readonly signal = 'stuck-tier' as const;
  readonly events = ['attempt'] as const;
  private readonly chains: Chains<number>;

  constructor(private readonly ctx: DetectorContext) {
    this.chains = new Chains(ctx, this.signal);
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'attempt' || e.tier === undefined) return;
    if (e.ok) return this.chains.end(scope.state, e.task, sink);
    const tier = e.tier;
    const chain = this.chains.extend(scope.state, e.task, tier, located.ref, sink);
    const { threshold } = this.ctx.config.signals[this.signal];
    if (chain.count < threshold) return;
    const { max, humanReviewFrom } = this.ctx.config.tiers;
    const human = tier >= humanReviewFrom;
    const target = Math.min(tier + 2, max);
    const action = human ? 'halt' : 'escalate';
    sink.report({ episode: chain.episode, action, count: chain.count, evidence: chain.refs }, () => ({
      signal: this.signal,
      action,
      count: chain.count,
      threshold,
      at: located.ref,
      ...whoOf(scope),
      subject: `task ${e.task} at tier ${tier}`,
      message: `Task ${e.task} failed ${chain.count} attempts at tier ${tier} without escalating`,
      recommendation: human
        ? `Tier ${tier} is at or past the human-review tier (${humanReviewFrom}): circuit-break task ${e.task} and ask a person.`
        : `Force escalate 2 tiers (tier ${tier} → ${target}, skipping the ineffective middle tier): loop-guardian escalate ${e.task}`,
      evidence: [...chain.refs],
      ...(human ? { status: 'BLOCKED' as const } : {}),
      episode: chain.episode,
      details: { tier, suggested_tier: human ? null : target },
    }));
  }

  endSession(session: SessionState): void {
    this.chains.endSession(session);
  }
}
