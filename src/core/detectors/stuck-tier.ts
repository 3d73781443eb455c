import { BoundedMap, inSession, sessionKey, type Detector, type DetectorContext, type FindingSink, type Scope } from '../detector';
import type { EventRef, LocatedEvent } from '../events';
import { pushEvidence } from '../finding';
import { episodeId, whoOf } from './common';

interface Chain {
  readonly tier: number;
  count: number;
  readonly episode: string;
  readonly refs: EventRef[];
}

/**
 * Seed 003: `threshold` failed attempts of a task without a tier change → force-escalate
 * (+2 tiers); from the human-review tier on, escalation is over: halt for a person.
 */
export class StuckTierDetector implements Detector {
  readonly signal = 'stuck-tier' as const;
  private readonly chains = new BoundedMap<Chain>();

  constructor(private readonly ctx: DetectorContext) {}

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'attempt' || e.tier === undefined) return;
    const key = sessionKey(scope.session, e.task);
    let chain = this.chains.get(key);
    if (e.ok) {
      if (chain) sink.resolve(chain.episode);
      this.chains.delete(key);
      return;
    }
    if (!chain || chain.tier !== e.tier) {
      if (chain) sink.resolve(chain.episode);
      chain = { tier: e.tier, count: 0, episode: episodeId(this.signal, key, located.ref), refs: [] };
      this.chains.set(key, chain);
    }
    chain.count++;
    pushEvidence(chain.refs, located.ref);
    const { threshold } = this.ctx.config.signals[this.signal];
    if (chain.count < threshold) return;
    const { max, humanReviewFrom } = this.ctx.config.tiers;
    const human = e.tier >= humanReviewFrom;
    const target = Math.min(e.tier + 2, max);
    sink.report({ episode: chain.episode, action: human ? 'halt' : 'escalate', count: chain.count, evidence: chain.refs }, () => ({
      signal: this.signal,
      action: human ? 'halt' : 'escalate',
      count: chain.count,
      threshold,
      at: located.ref,
      ...whoOf(scope),
      subject: `task ${e.task} at tier ${e.tier}`,
      message: `Task ${e.task} failed ${chain.count} attempts at tier ${e.tier} without escalating`,
      recommendation: human
        ? `Tier ${e.tier} is at or past the human-review tier (${humanReviewFrom}): circuit-break task ${e.task} and ask a person.`
        : `Force escalate 2 tiers (tier ${e.tier} → ${target}, skipping the ineffective middle tier): loop-guardian escalate ${e.task}`,
      evidence: [...chain.refs],
      ...(human ? { status: 'BLOCKED' as const } : {}),
      episode: chain.episode,
      details: { tier: e.tier, suggested_tier: human ? null : target },
    }));
  }

  endSession(session: string): void {
    this.chains.deleteWhere((key) => inSession(key, session));
  }
}
