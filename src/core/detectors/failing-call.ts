import { describeCall, type SettledCall } from '../calls';
import { clip } from '../canonical';
import { adviceForCall } from '../advice';
import { BoundedMap, type Detector, type DetectorContext, type FindingSink } from '../detector';
import { FAMILY_OF, type ErrorFamily, type ErrorKind } from '../errorClass';
import { times } from '../plainWords';
import type { EventRef } from '../events';
import { pushEvidence } from '../finding';
import { episodeId, whoOf } from './common';

interface Failures {
  readonly call: string;
  count: number;
  firstTs?: number;
  lastTs?: number;
  readonly episode: string;
  readonly refs: EventRef[];
}

interface SessionFailures {
  /** signature → error kind → failures, least recently failed first */
  readonly bySignature: Map<string, Map<ErrorKind, Failures>>;
}

const MAX_SIGNATURES = 500;

/**
 * Seed 004's loop circuit breaker: a failure signature is (tool, canonical args, error class).
 * Each class has its own retry budget; the breaker trips on the failure that exceeds it
 * (deterministic errors: the 2nd identical failure). Per session; signatures that have not failed
 * within the window (2 hours) are pruned; a success of the same call clears its failures.
 */
export class FailingCallDetector implements Detector {
  readonly signal = 'failing-call' as const;
  private readonly sessions = new BoundedMap<SessionFailures>(1_000);

  constructor(private readonly ctx: DetectorContext) {}

  call(c: SettledCall, sink: FindingSink): void {
    if (c.outcome.kind === 'unknown') return;
    let s = this.sessions.get(c.session);
    if (c.outcome.kind === 'ok') {
      const cleared = s?.bySignature.get(c.signature);
      if (cleared) {
        for (const f of cleared.values()) sink.resolve(f.episode);
        s?.bySignature.delete(c.signature);
      }
      return;
    }
    const cfg = this.ctx.config.signals[this.signal];
    if (!s) this.sessions.set(c.session, (s = { bySignature: new Map() }));
    if (c.ts !== undefined) prune(s, c.ts - cfg.windowMinutes * 60_000, sink);
    const kind: ErrorKind = c.outcome.errorKind;
    const family = FAMILY_OF[kind];
    let kinds = s.bySignature.get(c.signature);
    // Re-inserted at the end: the map stays ordered by last failure, so pruning stops early.
    if (kinds) s.bySignature.delete(c.signature);
    else kinds = new Map();
    s.bySignature.set(c.signature, kinds);
    if (s.bySignature.size > MAX_SIGNATURES) {
      const [oldest, dropped] = s.bySignature.entries().next().value as [string, Map<ErrorKind, Failures>];
      for (const f of dropped.values()) sink.resolve(f.episode);
      s.bySignature.delete(oldest);
    }
    let f = kinds.get(kind);
    if (!f) {
      f = { call: describeCall(c.tool, c.args), count: 0, episode: episodeId(this.signal, `${c.session}|${c.signature}|${kind}`, c.ref), refs: [] };
      kinds.set(kind, f);
    }
    f.count++;
    if (c.ts !== undefined) {
      f.firstTs ??= c.ts;
      f.lastTs = c.ts;
    }
    pushEvidence(f.refs, c.ref);
    const error = c.outcome.error;
    const budget = cfg.retries[family];
    const trips = budget + 1;
    if (f.count < trips) return;
    sink.report({ episode: f.episode, action: 'halt', count: f.count, evidence: f.refs }, () => ({
      signal: this.signal,
      action: 'halt',
      count: f.count,
      threshold: trips,
      at: c.settledAt,
      ...whoOf(c),
      subject: f.call,
      message: `Retry loop on ${f.call}: ${failedWords(f.count, family, kind, budget)}: ${clip(error, 160)}`,
      recommendation: `${adviceForCall(c.tool, c.outcome)} Options: fix the arguments, skip this step, or abort the task.`,
      evidence: [...f.refs],
      status: 'STALLED',
      episode: f.episode,
      details: {
        tool: c.tool,
        args: c.args,
        error,
        error_class: kind,
        family,
        fail_count: f.count,
        ...(f.firstTs !== undefined ? { first_ts: new Date(f.firstTs).toISOString() } : {}),
        ...(f.lastTs !== undefined ? { last_ts: new Date(f.lastTs).toISOString() } : {}),
      },
    }));
  }

  endSession(session: string): void {
    this.sessions.delete(session);
  }
}

/** Why the breaker tripped, in plain words: how often, and why retrying will not help. */
function failedWords(count: number, family: ErrorFamily, kind: ErrorKind, budget: number): string {
  const what = kind === 'unknown' ? 'error' : `${kind.replace(/_/g, ' ')} error`;
  if (family === 'deterministic') return `failed ${times(count)} with the same ${what}, which retrying cannot fix`;
  if (family === 'transient') return `failed ${times(count)} with a ${what}, more than the ${budget} ${budget === 1 ? 'retry' : 'retries'} such an error deserves`;
  return `failed ${times(count)} with the same error`;
}

/** Drops signatures whose last failure is older than `before`, oldest first, stopping at the first recent one. */
function prune(s: SessionFailures, before: number, sink: FindingSink): void {
  for (const [sig, kinds] of s.bySignature) {
    let last = -Infinity;
    for (const f of kinds.values()) last = Math.max(last, f.lastTs ?? Infinity);
    if (last >= before) return;
    for (const f of kinds.values()) sink.resolve(f.episode);
    s.bySignature.delete(sig);
  }
}
