import { clip, hash53, hashFoldedAscii, UUID_IN_TEXT } from '../canonical';
import { type Detector, type DetectorContext, type FindingSink, type Scope, type SessionState } from '../detector';
import type { LocatedEvent } from '../events';
import { Chains } from './chains';
import { whoOf } from './common';

/**
 * "Functionally identical": the same text once white space, case, timestamps and UUIDs, which
 * change between otherwise identical outputs, are set aside.
 */
export function outputKey(text: string): number {
  const marked = text.replace(TIME, '<time>').replace(UUID_IN_TEXT, '<uuid>');
  // White space and case folded as the text is hashed (an ASCII text, as most are), else by the expressions.
  return hashFoldedAscii(marked) ?? hash53(marked.replace(/\s+/g, ' ').trim().toLowerCase());
}

const TIME = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g;

/** Seed 002: an agent produces functionally identical output `threshold` (2) times in a row. */
export class IdenticalOutputDetector implements Detector {
  readonly signal = 'identical-output' as const;
  readonly events = ['output'] as const;
  /** One run per agent of a session (the session's own when no agent is named). */
  private readonly chains: Chains<number>;

  constructor(private readonly ctx: DetectorContext) {
    this.chains = new Chains(ctx, this.signal, undefined, (session, agent) => (agent === '' ? session : `${session}\u0000${agent}`));
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'output') return;
    const { threshold } = this.ctx.config.signals[this.signal];
    const chain = this.chains.extend(scope.state, scope.agent ?? '', outputKey(e.text), located.ref, sink);
    if (chain.count < threshold) return;
    sink.report({ episode: chain.episode, action: 'halt', count: chain.count, evidence: chain.refs }, () => ({
      signal: this.signal,
      action: 'halt',
      count: chain.count,
      threshold,
      at: located.ref,
      ...whoOf(scope),
      subject: clip(e.text, 100),
      message: `The agent produced the same output ${chain.count} times in a row: "${clip(e.text, 120)}"`,
      recommendation: 'Halt the agent and re-scope the task or try an alternative approach: repeating itself will not move it forward.',
      evidence: [...chain.refs],
      status: 'STALLED',
      episode: chain.episode,
    }));
  }

  endSession(session: SessionState): void {
    this.chains.endSession(session);
  }
}
