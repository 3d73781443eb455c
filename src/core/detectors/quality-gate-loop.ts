import { BoundedMap, inSession, sessionKey, type Detector, type DetectorContext, type FindingSink, type Scope } from '../detector';
import type { EventRef, LocatedEvent } from '../events';
import { pushEvidence } from '../finding';
import { clip } from '../canonical';
import { episodeId, whoOf } from './common';

interface Chain {
  readonly gate: string;
  count: number;
  readonly episode: string;
  readonly refs: EventRef[];
}

/** Seed 003: the same quality-gate check fails on `threshold` (2) attempts in a row → circuit break. */
export class QualityGateLoopDetector implements Detector {
  readonly signal = 'quality-gate-loop' as const;
  private readonly chains = new BoundedMap<Chain>();

  constructor(private readonly ctx: DetectorContext) {}

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'attempt') return;
    const key = sessionKey(scope.session, e.task);
    let chain = this.chains.get(key);
    if (e.ok || e.gate === undefined) {
      if (chain) sink.resolve(chain.episode);
      this.chains.delete(key);
      return;
    }
    if (!chain || chain.gate !== e.gate) {
      if (chain) sink.resolve(chain.episode);
      chain = { gate: e.gate, count: 0, episode: episodeId(this.signal, key, located.ref), refs: [] };
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
      subject: `task ${e.task}: gate ${e.gate}`,
      message: `Quality gate "${e.gate}" failed ${chain.count} attempts in a row for task ${e.task}${e.error ? `: ${clip(e.error, 120)}` : ''}`,
      recommendation: `The quality-gate failure is fundamental, not a retry issue: circuit-break task ${e.task} and have a person fix the underlying check (or its configuration).`,
      evidence: [...chain.refs],
      status: 'BLOCKED',
      episode: chain.episode,
    }));
  }

  endSession(session: string): void {
    this.chains.deleteWhere((key) => inSession(key, session));
  }
}
