import type { SettledCall } from '../calls';
import { clip } from '../canonical';
import { adviceForCall } from '../advice';
import { BoundedMap, inSession, sessionKey, type Detector, type DetectorContext, type FindingSink, type Scope } from '../detector';
import { ErrorText, sameError } from '../errorMatch';
import type { EventRef, LocatedEvent } from '../events';
import { pushEvidence, type Finding } from '../finding';
import { episodeId, whoOf } from './common';

interface Chain {
  latest: ErrorText;
  count: number;
  readonly episode: string;
  readonly refs: EventRef[];
}

/**
 * Seeds 001 and 003: consecutive failures with the same error (fuzzy-matched as seed 003 says),
 * tool failures per session and task attempts per task. Warns at `warnAt`, halts at `threshold`.
 */
export class RepeatedErrorDetector implements Detector {
  readonly signal = 'repeated-error' as const;
  private readonly chains = new BoundedMap<Chain>();

  constructor(private readonly ctx: DetectorContext) {}

  call(c: SettledCall, sink: FindingSink): void {
    if (c.outcome.kind === 'unknown') return;
    const key = sessionKey(c.session, 'calls');
    if (c.outcome.kind === 'ok') return this.breakChain(key, sink);
    const chain = this.extend(key, c.outcome.error, c.ref, sink);
    this.check(chain, c.settledAt, whoOf(c), `${c.tool} fails`, adviceForCall(c.tool, c.outcome), sink);
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type !== 'attempt') return;
    const key = sessionKey(scope.session, 'task', e.task);
    if (e.ok) return this.breakChain(key, sink);
    const error = e.error ?? (e.gate !== undefined ? `quality gate ${e.gate} failed` : undefined);
    if (error === undefined) return;
    const chain = this.extend(key, error, located.ref, sink);
    this.check(
      chain,
      located.ref,
      whoOf(scope),
      `task ${e.task} fails`,
      'The same error survives every attempt: force-escalate 2 tiers (skip the ineffective middle tier) or find the root cause before retrying.',
      sink,
    );
  }

  endSession(session: string): void {
    this.chains.deleteWhere((key) => inSession(key, session));
  }

  private breakChain(key: string, sink: FindingSink): void {
    const chain = this.chains.get(key);
    if (!chain) return;
    sink.resolve(chain.episode);
    this.chains.delete(key);
  }

  private extend(key: string, error: string, ref: EventRef, sink: FindingSink): Chain {
    let chain = this.chains.get(key);
    const text = new ErrorText(error);
    if (chain && sameError(chain.latest, text) !== undefined) {
      chain.latest = text;
      chain.count++;
    } else {
      if (chain) sink.resolve(chain.episode);
      chain = { latest: text, count: 1, episode: episodeId(this.signal, key, ref), refs: [] };
      this.chains.set(key, chain);
    }
    pushEvidence(chain.refs, ref);
    return chain;
  }

  private check(chain: Chain, at: EventRef, who: Pick<Finding, 'session' | 'task' | 'agent'>, what: string, advice: string, sink: FindingSink): void {
    const { threshold, warnAt } = this.ctx.config.signals[this.signal];
    if (chain.count < Math.min(warnAt, threshold)) return;
    const halt = chain.count >= threshold;
    sink.report({ episode: chain.episode, action: halt ? 'halt' : 'warn', count: chain.count, evidence: chain.refs }, () => ({
      signal: this.signal,
      action: halt ? 'halt' : 'warn',
      count: chain.count,
      threshold,
      at,
      ...who,
      subject: clip(chain.latest.text, 100),
      message: `${what} with the same error ${chain.count} times in a row: ${clip(chain.latest.text, 160)}`,
      recommendation: advice,
      evidence: [...chain.refs],
      ...(halt ? { status: 'STALLED' as const } : {}),
      episode: chain.episode,
    }));
  }
}
