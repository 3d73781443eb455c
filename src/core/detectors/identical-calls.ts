import { describeCall, isProgress, type Outcome, type SettledCall } from '../calls';
import { adviceForCall } from '../advice';
import { BoundedMap, type Detector, type DetectorContext, type FindingSink } from '../detector';
import { pushEvidence } from '../finding';
import type { EventRef } from '../events';
import { episodeId, pushBounded, whoOf } from './common';

interface Chain {
  readonly signature: string;
  readonly episode: string;
  count: number;
  readonly refs: EventRef[];
  readonly outcomes: Outcome[];
}

/** Seed 001: the same tool with the same canonical arguments N times in a row. */
export class IdenticalCallsDetector implements Detector {
  readonly signal = 'identical-calls' as const;
  private readonly chains = new BoundedMap<Chain>();

  constructor(private readonly ctx: DetectorContext) {}

  call(c: SettledCall, sink: FindingSink): void {
    const { threshold } = this.ctx.config.signals[this.signal];
    let chain = this.chains.get(c.session);
    if (!chain || chain.signature !== c.signature) {
      if (chain) sink.resolve(chain.episode);
      chain = { signature: c.signature, episode: episodeId(this.signal, c.session, c.ref), count: 0, refs: [], outcomes: [] };
      this.chains.set(c.session, chain);
    }
    chain.count++;
    pushEvidence(chain.refs, c.ref);
    pushBounded(chain.outcomes, c.outcome, 50);
    if (chain.count < threshold) return;
    const progress = isProgress(chain.outcomes);
    const subject = describeCall(c.tool, c.args);
    sink.report({ episode: chain.episode, action: progress ? 'warn' : 'halt', count: chain.count, evidence: chain.refs }, () => ({
      signal: this.signal,
      action: progress ? 'warn' : 'halt',
      count: chain.count,
      threshold,
      at: c.settledAt,
      ...whoOf(c),
      subject,
      message: progress
        ? `${subject} called ${chain.count} times in a row; every call succeeded with a new result, so it looks like polling with progress`
        : `Same action repeated ${chain.count} times consecutively: ${subject}, with no progress`,
      recommendation: progress
        ? `If ${c.tool} is polling, make sure it has an end condition; otherwise change the arguments or the approach.`
        : adviceForCall(c.tool, c.outcome),
      evidence: [...chain.refs],
      ...(progress ? {} : { status: 'STALLED' as const }),
      episode: chain.episode,
    }));
  }

  endSession(session: string): void {
    this.chains.delete(session);
  }
}
