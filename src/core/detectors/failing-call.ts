import { callTimeMs, type SettledCall } from '../calls';
import { sayCall } from '../plainWords';
import { clip } from '../canonical';
import { adviceForCall } from '../advice';
import { BoundedMap, type Detector, type DetectorContext, type FindingSink, type SessionState } from '../detector';
import { FAMILY_OF, type ErrorFamily, type ErrorKind } from '../errorClass';
import { times } from '../plainWords';
import type { EventRef } from '../events';
import { pushEvidence } from '../finding';
import { episodeId, whoOf } from './common';

/** One failure signature's failures. Its episode is named when first reported: most never are. */
interface Failures {
  readonly kind: ErrorKind;
  /** The first failing call's. */
  readonly tool: string;
  readonly args: string;
  readonly start: EventRef;
  count: number;
  firstTs?: number;
  lastTs?: number;
  episode?: string;
  readonly refs: EventRef[];
}

/**
 * A session's failing signatures, each with its failures by error kind (in the order the kinds
 * first failed), least recently failed first; and how many of them share each signature hash, so
 * that a success looks its signature up only when a call of the same hash failed (most never did).
 */
class SessionFailures {
  /** Each signature's failures, with its hash. */
  private readonly bySignature = new Map<string, { readonly hash: number; readonly kinds: Failures[] }>();
  private readonly hashes = new Map<number, number>();

  get size(): number {
    return this.bySignature.size;
  }

  get(c: SettledCall): Failures[] | undefined {
    return this.hashes.has(c.signatureHash) ? this.bySignature.get(c.signature)?.kinds : undefined;
  }

  /** Sets the signature's failures, as the most recent. */
  setLatest(c: SettledCall, kinds: Failures[]): void {
    const entry = { hash: c.signatureHash, kinds };
    if (this.bySignature.delete(c.signature)) this.bySignature.set(c.signature, entry);
    else {
      this.bySignature.set(c.signature, entry);
      this.hashes.set(c.signatureHash, (this.hashes.get(c.signatureHash) ?? 0) + 1);
    }
  }

  delete(signature: string): void {
    const entry = this.bySignature.get(signature);
    if (entry === undefined) return;
    this.bySignature.delete(signature);
    const n = (this.hashes.get(entry.hash) ?? 1) - 1;
    if (n > 0) this.hashes.set(entry.hash, n);
    else this.hashes.delete(entry.hash);
  }

  /** Each signature and its failures, least recently failed first. */
  entries(): IterableIterator<[string, { readonly kinds: Failures[] }]> {
    return this.bySignature.entries();
  }
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
      const cleared = s?.get(c);
      if (cleared) {
        resolveAll(cleared, sink);
        s?.delete(c.signature);
      }
      return;
    }
    const cfg = this.ctx.config.signals[this.signal];
    if (!s) this.sessions.set(c.session, (s = new SessionFailures()));
    const ts = callTimeMs(c);
    if (ts !== undefined) prune(s, ts - cfg.windowMinutes * 60_000, sink);
    const kind: ErrorKind = c.outcome.errorKind;
    const family = FAMILY_OF[kind];
    const kinds = s.get(c) ?? [];
    // Re-inserted at the end: the map stays ordered by last failure, so pruning stops early.
    s.setLatest(c, kinds);
    if (s.size > MAX_SIGNATURES) {
      const [oldest, dropped] = s.entries().next().value as [string, { readonly kinds: Failures[] }];
      resolveAll(dropped.kinds, sink);
      s.delete(oldest);
    }
    let f: Failures | undefined;
    for (const k of kinds) if (k.kind === kind) f = k;
    if (!f) {
      f = { kind, tool: c.tool, args: c.args, start: c.ref, count: 0, refs: [] };
      kinds.push(f);
    }
    f.count++;
    if (ts !== undefined) {
      f.firstTs ??= ts;
      f.lastTs = ts;
    }
    pushEvidence(f.refs, c.ref);
    const error = c.outcome.error;
    const budget = cfg.retries[family];
    const trips = budget + 1;
    if (f.count < trips) return;
    const failures = f;
    const episode = (f.episode ??= episodeId(this.signal, `${c.session}|${c.signature}|${kind}`, f.start));
    sink.report({ episode, action: 'halt', count: f.count, evidence: f.refs }, () => {
      // Said in words only when a finding is made, as the other repetition signals do.
      const call = sayCall(failures.tool, failures.args);
      return {
        signal: this.signal,
        action: 'halt',
        count: failures.count,
        threshold: trips,
        at: c.settledAt,
        ...whoOf(c),
        subject: call,
        message: `Retry loop on ${call}: ${failedWords(failures.count, family, kind, budget)}: ${clip(error, 160)}`,
        recommendation: `${adviceForCall(c.tool, c.outcome)} Options: fix the arguments, skip this step, or abort the task.`,
        evidence: [...failures.refs],
        status: 'STALLED',
        episode,
        details: {
          tool: c.tool,
          args: c.args,
          error,
          error_class: kind,
          family,
          fail_count: failures.count,
          ...(failures.firstTs !== undefined ? { first_ts: new Date(failures.firstTs).toISOString() } : {}),
          ...(failures.lastTs !== undefined ? { last_ts: new Date(failures.lastTs).toISOString() } : {}),
        },
      };
    });
  }

  endSession(session: SessionState): void {
    this.sessions.delete(session.name);
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
  for (const [sig, { kinds }] of s.entries()) {
    let last = -Infinity;
    for (const f of kinds) last = Math.max(last, f.lastTs ?? Infinity);
    if (last >= before) return;
    resolveAll(kinds, sink);
    s.delete(sig);
  }
}

/** Resolves the failures' episodes: those reported (named) only, the others were never raised. */
function resolveAll(kinds: readonly Failures[], sink: FindingSink): void {
  for (const f of kinds) if (f.episode !== undefined) sink.resolve(f.episode);
}
