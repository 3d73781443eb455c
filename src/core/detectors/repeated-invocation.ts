import { describeCheck, sameInvocation, type InvocationRecord } from '../checkInfiniteLoop';
import { type Detector, type DetectorContext, type FindingSink, type Scope, type SessionSlot, type SessionState } from '../detector';
import type { InvocationEvent, LocatedEvent } from '../events';
import { SessionChains } from './chains';
import { whoOf } from './common';
import { pushBounded } from '../finding';

type Invocation = Pick<InvocationRecord, 'agent_name' | 'config'>;

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
  readonly events = ['invocation'] as const;
  private readonly chains: SessionChains<Invocation>;
  /** Each session's last few invocations, for seed 000's `recent_invocations`. */
  private readonly recent: SessionSlot<InvocationRecord[]>;

  constructor(private readonly ctx: DetectorContext) {
    this.chains = new SessionChains(ctx, this.signal, (a, b) => sameInvocation(a, b.agent_name, b.config));
    this.recent = ctx.slot(() => []);
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'invocation') return;
    const { threshold } = this.ctx.config.signals[this.signal];
    const config = e.config ?? {};
    const chain = this.chains.extend(scope.state, { agent_name: e.agent, config }, located.ref, sink);
    const recent = this.recent.of(scope.state);
    // Keep enough of the tail for the chain (up to five shown) and the entry before it.
    pushBounded(recent, toRecord(e), 6);
    if (chain.count < threshold) return;
    // Seed 000's words are written only when the finding is (most repeats of a loop are no news),
    // from the tail and count as they are now: later invocations move them on.
    const tail = recent.slice();
    const count = chain.count;
    sink.report({ episode: chain.episode, action: 'halt', count, evidence: chain.refs }, () => {
      const result = describeCheck(tail, count, threshold, e.agent);
      return {
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
      };
    });
  }

  endSession(session: SessionState): void {
    this.chains.endSession(session);
    this.recent.clear(session);
  }
}
