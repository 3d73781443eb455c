import { describeCheck, sameInvocation, type InvocationRecord } from '../checkInfiniteLoop';
import { BoundedMap, type Detector, type DetectorContext, type FindingSink, type Scope } from '../detector';
import type { EventRef, InvocationEvent, LocatedEvent } from '../events';
import { pushEvidence } from '../finding';
import { episodeId, pushBounded, whoOf } from './common';

interface Chain {
  readonly agent: string;
  readonly config: Record<string, unknown>;
  count: number;
  readonly episode: string;
  readonly refs: EventRef[];
}

interface SessionInvocations {
  chain?: Chain;
  /** The last few invocations, for seed 000's `recent_invocations`. */
  readonly recent: InvocationRecord[];
}

export function toRecord(e: InvocationEvent): InvocationRecord {
  const timestamp = e.timestamp ?? e.ts;
  return {
    agent_name: e.agent,
    config: e.config ?? {},
    ...(timestamp !== undefined ? { timestamp } : {}),
    ...(e.result !== undefined ? { result: e.result } : {}),
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
  };
}

/** Seed 000: the same agent with a deep-equal config invoked `threshold` times in a row → halt. */
export class RepeatedInvocationDetector implements Detector {
  readonly signal = 'repeated-invocation' as const;
  private readonly sessions = new BoundedMap<SessionInvocations>();

  constructor(private readonly ctx: DetectorContext) {}

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'invocation') return;
    const { threshold } = this.ctx.config.signals[this.signal];
    let s = this.sessions.get(scope.session);
    if (!s) this.sessions.set(scope.session, (s = { recent: [] }));
    const config = e.config ?? {};
    if (!s.chain || !sameInvocation({ agent_name: s.chain.agent, config: s.chain.config }, e.agent, config)) {
      if (s.chain) sink.resolve(s.chain.episode);
      s.chain = { agent: e.agent, config, count: 0, episode: episodeId(this.signal, scope.session, located.ref), refs: [] };
    }
    const chain = s.chain;
    chain.count++;
    pushEvidence(chain.refs, located.ref);
    // Keep enough of the tail for the chain (up to five shown) and the entry before it.
    pushBounded(s.recent, toRecord(e), 6);
    if (chain.count < threshold) return;
    const result = describeCheck(s.recent, chain.count, threshold, e.agent);
    sink.report({ episode: chain.episode, action: 'halt', count: chain.count, evidence: chain.refs }, () => ({
      signal: this.signal,
      action: 'halt',
      count: chain.count,
      threshold,
      at: located.ref,
      ...whoOf(scope),
      agent: e.agent,
      subject: `${e.agent} ${JSON.stringify(config)}`,
      message: result.message,
      recommendation: `Abort the workflow: ${result.diagnostic_info.suspected_cause}. Review the ${e.agent} logs and change the config or approach before invoking it again.`,
      evidence: [...chain.refs],
      status: 'STALLED',
      episode: chain.episode,
      details: { ...result },
    }));
  }

  endSession(session: string): void {
    this.sessions.delete(session);
  }
}
