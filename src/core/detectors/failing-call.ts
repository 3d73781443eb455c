import { callTimeMs, type SettledCall } from '../calls';
import { sayCall } from '../plainWords';
import { clip } from '../canonical';
import { boundedText } from '../redact';
import { adviceForCall } from '../advice';
import { telltaleLine } from '../errorLines';
import type { Detector, DetectorContext, FindingSink, SessionSlot, SessionState } from '../detector';
import { FAMILY_OF, type ErrorFamily, type ErrorKind } from '../errorClass';
import { times } from '../plainWords';
import type { EventRef } from '../events';
import { pushEvidence } from '../finding';
import { episodeId, whoOf } from './common';
import { RecentInts } from './recentInts';
import { LinkedOrder, type Linked } from '../linkedOrder';

/**
 * One failure signature's failures of one error kind. Its episode is named when first reported:
 * most never are. Its evidence is a list from its second failure on (`refs`): most signatures
 * fail once.
 */
interface Failures {
  kind: ErrorKind;
  start: EventRef;
  count: number;
  /** The attempt of its latest failure: calls of one batch count once. */
  attempt: number;
  firstTs: number | undefined;
  lastTs: number | undefined;
  episode: string | undefined;
  /** Its failures' events, made at its second failure (before it, `start` alone). */
  refs: EventRef[] | undefined;
}

/**
 * A failing signature: its failures of the kind that failed first (its own fields: most signatures
 * fail once, with one kind, and are one object), those of other kinds after it (in the order they
 * first failed, made when a second kind fails), and the next signature of the same low hash (there
 * is none but when two signatures' low 30 bits collide).
 */
interface Signature extends Linked<Signature>, Failures {
  /**
   * Its call's id (`callId`) in two small integers, the low 30 bits (`signatureHash`, its key in the
   * session's map) and the rest: the call's text and arguments are not kept (most signatures fail
   * once, and are kept long); a call is this signature when its id is this one.
   */
  readonly hash: number;
  readonly high: number;
  /** The session's count of new calls (`SessionFailures.novelty`) at this signature's last failure. */
  novelty: number;
  /** Its failures of the kinds that failed after its first. */
  others: Failures[] | undefined;
  next: Signature | undefined;
  /** The session's signatures it is one of (the bound on every session's together drops it from there). */
  readonly owner: SessionFailures;
}

/**
 * A session's failing signatures by their low hash, least recently failed first. Signatures whose
 * low hashes collide share their place in the order, at the latest failure of either.
 */
class SessionFailures {
  /** Made at the session's first failure: most sessions' calls succeed, and an empty map is a table of its own. */
  private byHash: Map<number, Signature> | undefined;
  size = 0;
  /** How many calls of the session were new (a call it had not made before, in the last MAX_SEEN): something else was tried. */
  novelty = 0;
  private readonly seen = new RecentInts(MAX_SEEN);

  /** Notes a call of the session: one it had not made before counts as a change. */
  note(c: SettledCall): void {
    if (this.seen.has(c.signatureHash)) return;
    this.novelty++;
    this.seen.add(c.signatureHash);
  }

  /** Forgets every signature and call of the session (its turn ended), keeping the room the calls seen took. */
  clear(): void {
    this.byHash?.clear();
    this.size = 0;
    this.novelty = 0;
    this.seen.clear();
  }

  get(c: SettledCall): Signature | undefined {
    for (let s = this.byHash?.get(c.signatureHash); s !== undefined; s = s.next) if (s.high === c.signatureHigh) return s;
    return undefined;
  }

  /**
   * The signature failed again: it becomes the most recent (set again at the end: the map stays
   * ordered by last failure, so pruning stops early).
   */
  touch(signature: Signature): void {
    const byHash = this.byHash as Map<number, Signature>;
    const head = byHash.get(signature.hash) as Signature;
    byHash.delete(signature.hash);
    byHash.set(signature.hash, head);
  }

  /** A new failing signature, the most recent, with its first failure. */
  add(c: SettledCall, kind: ErrorKind, ts: number | undefined): Signature {
    const hash = c.signatureHash;
    const byHash = (this.byHash ??= new Map());
    const head = byHash.get(hash);
    const signature: Signature = {
      hash,
      high: c.signatureHigh,
      novelty: this.novelty,
      kind,
      start: c.ref,
      count: 1,
      attempt: c.attempt,
      firstTs: ts,
      lastTs: ts,
      episode: undefined,
      refs: undefined,
      others: undefined,
      next: undefined,
      owner: this,
      older: undefined,
      newer: undefined,
    };
    if (head !== undefined) {
      signature.next = head;
      byHash.delete(hash);
    }
    byHash.set(hash, signature);
    this.size++;
    return signature;
  }

  delete(signature: Signature): void {
    const hash = signature.hash;
    const byHash = this.byHash;
    const head = byHash?.get(hash);
    if (byHash === undefined || head === undefined) return;
    if (head === signature) {
      if (signature.next === undefined) byHash.delete(hash);
      else byHash.set(hash, signature.next);
    } else {
      let s = head;
      while (s.next !== undefined && s.next !== signature) s = s.next;
      if (s.next !== signature) return;
      s.next = signature.next;
    }
    this.size--;
  }

  /** The signatures of the least recently failed low hash. */
  oldest(): Signature | undefined {
    return this.byHash?.values().next().value;
  }

  /** Every signature of the session. */
  *all(): IterableIterator<Signature> {
    if (this.byHash === undefined) return;
    for (const head of this.byHash.values()) for (let s: Signature | undefined = head; s !== undefined; s = s.next) yield s;
  }
}

const MAX_SIGNATURES = 500;
/**
 * Failing signatures kept over every session together: past it, the least recently failed goes.
 * As many as 1,000 sessions of MAX_SIGNATURES each (the bound when sessions were kept 1,000 at
 * most, which left a receiver with more sessions at once blind to this signal: issue 37).
 */
const MAX_ALL_SIGNATURES = 500_000;
/** The calls a session remembers having made, to tell a new one. */
const MAX_SEEN = 2_000;

/**
 * Seed 004's loop circuit breaker: a failure signature is (tool, canonical args, error class).
 * Each class has its own retry budget; the breaker trips on the failure that exceeds it
 * (deterministic errors: the 2nd identical failure). Per session; signatures that have not failed
 * within the window (2 hours) are pruned; a success of the same call clears its failures.
 *
 * A re-run after the agent did something new is a new attempt, not a retry (issue 25: an edit,
 * then the build again, its error changing or not): when the session made a call it had not made
 * before since this signature last failed, its failures count from one again. Only re-runs with
 * nothing new in between (the same edit, the same read, the same test, round after round: seed
 * 001's loop) count towards the budget.
 */
export class FailingCallDetector implements Detector {
  readonly signal = 'failing-call' as const;
  /** Each session's signatures, in the session's own slot: kept as long as the engine keeps the session. */
  private readonly sessions: SessionSlot<SessionFailures>;
  /**
   * Every session's signatures, least recently failed first, within MAX_ALL_SIGNATURES (a session's
   * leave with it: `endSession`, at its turn's end or when the engine forgets it).
   */
  private readonly order = new LinkedOrder<Signature>();

  constructor(private readonly ctx: DetectorContext) {
    this.sessions = ctx.slot(() => new SessionFailures());
  }

  call(c: SettledCall, sink: FindingSink): void {
    const s = this.sessions.of(c.sessionState);
    const novelty = s.novelty;
    s.note(c);
    if (c.outcome.kind === 'unknown') return;
    if (c.outcome.kind === 'ok') {
      const cleared = s.get(c);
      if (cleared) this.drop(cleared, sink);
      return;
    }
    const cfg = this.ctx.config.signals[this.signal];
    const ts = callTimeMs(c);
    if (ts !== undefined) this.prune(s, ts - cfg.windowMinutes * 60_000, sink);
    const kind: ErrorKind = c.outcome.errorKind;
    const family = FAMILY_OF[kind];
    let signature = s.get(c);
    let f: Failures | undefined;
    if (signature === undefined) {
      signature = f = s.add(c, kind, ts);
      this.order.add(signature);
      if (s.size > MAX_SIGNATURES) this.drop(s.oldest() as Signature, sink);
      if (this.order.size > MAX_ALL_SIGNATURES) this.drop(this.order.first() as Signature, sink);
    } else {
      s.touch(signature);
      this.order.moveToEnd(signature);
      if (signature.novelty !== novelty) {
        // Something new was tried since it last failed: this failure starts a new attempt.
        resolveAll(signature, sink);
        startOver(signature, kind, c, ts);
        signature.novelty = novelty;
        f = signature;
      } else if ((f = failuresOf(signature, kind)) !== undefined) {
        // The same call twice in one batch of parallel calls is one attempt.
        if (f.attempt !== c.attempt) f.count++;
        f.attempt = c.attempt;
        pushEvidence((f.refs ??= [f.start]), c.ref);
        if (ts !== undefined) {
          f.firstTs ??= ts;
          f.lastTs = ts;
        }
      } else {
        f = firstFailure(kind, c, ts);
        (signature.others ??= []).push(f);
      }
    }
    const error = c.outcome.error;
    const budget = cfg.retries[family];
    const trips = budget + 1;
    if (f.count < trips) return;
    const failures = f;
    const refs = (f.refs ??= [f.start]);
    const episode = (f.episode ??= episodeId(this.signal, `${c.session}|${c.signature}|${kind}`, f.start));
    sink.report({ episode, action: 'halt', count: f.count, evidence: refs }, () => {
      // Said in words only when a finding is made, as the other repetition signals do.
      const call = sayCall(c.tool, c.args);
      return {
        signal: this.signal,
        action: 'halt',
        count: failures.count,
        threshold: trips,
        at: c.settledAt,
        ...whoOf(c),
        subject: call,
        message: `Retry loop on ${call}: ${failedWords(failures.count, family, kind, budget)}: ${clip(telltaleLine(error), 160)}`,
        recommendation: `${adviceForCall(c.tool, c.outcome)} Options: fix the arguments, skip this step, or abort the task.`,
        evidence: [...refs],
        status: 'STALLED',
        episode,
        details: {
          tool: c.tool,
          // Seed 004's record of the loop, bounded and its credentials masked: it is shown, written and sent on.
          args: boundedText(c.args),
          error: boundedText(error),
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
    const s = this.sessions.peek(session);
    if (s === undefined) return;
    for (const signature of s.all()) this.order.delete(signature);
    // Kept, empty, for the session's next turn (a forgotten session takes it with it).
    s.clear();
  }

  /** A signature goes (its call succeeded, it is too old, or a bound): its episodes end. */
  private drop(signature: Signature, sink: FindingSink): void {
    resolveAll(signature, sink);
    signature.owner.delete(signature);
    this.order.delete(signature);
  }

  /**
   * Drops signatures whose last failure is older than `before`, oldest first, stopping at the first
   * recent one (signatures that share a low hash are dropped one by one, and stop it as one).
   */
  private prune(s: SessionFailures, before: number, sink: FindingSink): void {
    for (let head = s.oldest(); head !== undefined; head = s.oldest()) {
      let recent = false;
      for (let sig: Signature | undefined = head; sig !== undefined; sig = sig.next) {
        if (lastFailure(sig) >= before) recent = true;
        else this.drop(sig, sink);
      }
      if (recent) return;
    }
  }
}

/** The signature's failures of `kind`, if it failed so. */
function failuresOf(sig: Signature, kind: ErrorKind): Failures | undefined {
  if (sig.kind === kind) return sig;
  if (sig.others !== undefined) for (const f of sig.others) if (f.kind === kind) return f;
  return undefined;
}

/** A kind's first failure, by the call `c` at `ts`: its evidence `start` alone until a second. */
function firstFailure(kind: ErrorKind, c: SettledCall, ts: number | undefined): Failures {
  return { kind, start: c.ref, count: 1, attempt: c.attempt, firstTs: ts, lastTs: ts, episode: undefined, refs: undefined };
}

/** The signature's failures counted from this one again, of its kind alone (its episodes resolved before): as `firstFailure` makes them. */
function startOver(sig: Signature, kind: ErrorKind, c: SettledCall, ts: number | undefined): void {
  sig.kind = kind;
  sig.start = c.ref;
  sig.count = 1;
  sig.attempt = c.attempt;
  sig.firstTs = ts;
  sig.lastTs = ts;
  sig.episode = undefined;
  sig.refs = undefined;
  sig.others = undefined;
}

/** Why the breaker tripped, in plain words: how often, and why retrying will not help. */
function failedWords(count: number, family: ErrorFamily, kind: ErrorKind, budget: number): string {
  // `file_not_found` is every "not found" (a file, a path, a search text, a 404): said as such.
  const what = kind === 'unknown' ? 'error' : kind === 'file_not_found' ? 'not-found error' : `${kind.replace(/_/g, ' ')} error`;
  if (family === 'deterministic') return `failed ${times(count)} with the same ${what}, which retrying cannot fix`;
  if (family === 'transient') return `failed ${times(count)} with a ${what}, more than the ${budget} ${budget === 1 ? 'retry' : 'retries'} such an error deserves`;
  return `failed ${times(count)} with the same error`;
}

/** When the signature last failed (a failure without a time counts as now). */
function lastFailure(sig: Signature): number {
  let last = sig.lastTs ?? Infinity;
  if (sig.others !== undefined) for (const f of sig.others) last = Math.max(last, f.lastTs ?? Infinity);
  return last;
}

/** Resolves the signature's episodes: those reported (named) only, the others were never raised. */
function resolveAll(sig: Signature, sink: FindingSink): void {
  resolveKind(sig, sink);
  if (sig.others !== undefined) for (const f of sig.others) resolveKind(f, sink);
}

function resolveKind(f: Failures, sink: FindingSink): void {
  if (f.episode !== undefined) sink.resolve(f.episode);
}
