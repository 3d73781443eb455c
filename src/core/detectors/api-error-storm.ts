import { apiErrorCause, CAUSE_ADVICE, DETERMINISTIC_CAUSES } from '../apiErrorCause';
import type { SettledCall } from '../calls';
import { clip } from '../canonical';
import type { Detector, DetectorContext, FindingSink, Scope, SessionSlot, SessionState } from '../detector';
import { telltaleLine } from '../errorLines';
import { ErrorText, sameError } from '../errorMatch';
import type { ApiErrorEvent, EventRef, LocatedEvent } from '../events';
import { pushEvidence, type Action } from '../finding';
import { SessionChains } from './chains';
import { episodeId, whoOf } from './common';

/** What makes two failed model requests the same error: the fields both carry. */
interface ApiErrorKey {
  readonly status?: number;
  readonly class?: string;
  readonly text?: ErrorText;
}

function keyOf(e: ApiErrorEvent): ApiErrorKey {
  return {
    ...(e.status !== undefined ? { status: e.status } : {}),
    ...(e.class !== undefined ? { class: e.class } : {}),
    ...(e.error !== undefined && e.error.trim() !== '' ? { text: new ErrorText(e.error) } : {}),
  };
}

/** Same when every field both carry agrees (the message fuzzily, as seed 003 says); two bare failures are the same. */
function sameApiError(a: ApiErrorKey, b: ApiErrorKey): boolean {
  let compared = false;
  if (a.status !== undefined && b.status !== undefined) {
    if (a.status !== b.status) return false;
    compared = true;
  }
  if (a.class !== undefined && b.class !== undefined) {
    if (a.class !== b.class) return false;
    compared = true;
  }
  if (a.text !== undefined && b.text !== undefined) {
    if (sameError(a.text, b.text) === undefined) return false;
    compared = true;
  }
  const bare = (k: ApiErrorKey) => k.status === undefined && k.class === undefined && k.text === undefined;
  return compared || (bare(a) && bare(b));
}

/** The failures since the session's model last answered. */
interface Storm {
  readonly episode: string;
  retries: number;
  refs: EventRef[];
}

/**
 * Seed 001's "consecutive identical errors", applied to the errors that are not a tool's: the
 * model's requests failing (an HTTP error, a refused key, an exhausted quota), again and again,
 * while the agent retries by itself or the person re-sends. Anything the model answers (a reply, a
 * call, a delegation) ends the storm; a re-sent prompt does not.
 *
 * Severity, by the likely cause (`apiErrorCause`): the same error `threshold` (5) times in a row,
 * or automatic retries past `retryBudget` (10), halt only when the cause is one the same request
 * meets every time — context size, credentials, quota, model, the request's shape — since then
 * nothing will change until a person does. Rate limits, overloaded or failing providers and the
 * network pass by themselves, and the agents' own back-off is the right response: those only warn,
 * with the cause named. From `warnAt` (3) the same error warns.
 */
export class ApiErrorStormDetector implements Detector {
  readonly signal = 'api-error-storm' as const;
  readonly events = ['api_error', 'reply', 'delegation'] as const;
  readonly spansTurns = true;
  private readonly chains: SessionChains<ApiErrorKey>;
  private readonly storms: SessionSlot<{ storm?: Storm }>;

  constructor(private readonly ctx: DetectorContext) {
    this.chains = new SessionChains(ctx, this.signal, sameApiError);
    this.storms = ctx.slot(() => ({}));
  }

  call(c: SettledCall, sink: FindingSink): void {
    this.answered(c.sessionState, sink);
  }

  event(located: LocatedEvent, scope: Scope, sink: FindingSink): void {
    const e = located.event;
    if (e.type === 'reply' || e.type === 'delegation') return this.answered(scope.state, sink);
    if (e.type !== 'api_error') return;
    const chain = this.chains.extend(scope.state, keyOf(e), located.ref, sink);
    const held = this.storms.of(scope.state);
    const storm = (held.storm ??= { episode: episodeId(this.signal, scope.session, located.ref), retries: 0, refs: [] });
    if (e.retry !== undefined) storm.retries++;
    pushEvidence(storm.refs, located.ref);

    const { threshold, warnAt, retryBudget } = this.ctx.config.signals[this.signal];
    const cause = apiErrorCause(e);
    const settled = DETERMINISTIC_CAUSES.has(cause);
    const sameRun = chain.count >= Math.min(warnAt, threshold);
    const overBudget = storm.retries > retryBudget;
    if (!sameRun && !overBudget) return;
    const action: Action = settled && (chain.count >= threshold || overBudget) ? 'halt' : 'warn';
    const { label, advice } = CAUSE_ADVICE[cause];
    const what = e.error !== undefined && e.error.trim() !== '' ? clip(telltaleLine(e.error), 160) : e.class ?? (e.status !== undefined ? `HTTP ${e.status}` : 'no message');
    const status = e.status !== undefined ? ` (HTTP ${e.status})` : '';
    const count = sameRun ? chain.count : storm.retries;
    const evidence = sameRun ? chain.refs : storm.refs;
    sink.report({ episode: storm.episode, action, count, evidence }, () => ({
      signal: this.signal,
      action,
      count,
      threshold: sameRun ? threshold : retryBudget,
      at: located.ref,
      ...whoOf(scope),
      ...(e.model !== undefined ? { subject: `${e.model}: ${clip(what, 80)}` } : { subject: clip(what, 100) }),
      message: sameRun
        ? `The model request failed ${chain.count} times in a row with the same error${status}: ${what}`
        : `The model request was retried automatically ${storm.retries} times without an answer (budget ${retryBudget})${status}: ${what}`,
      recommendation: `Likely cause: ${label}. ${advice.charAt(0).toUpperCase()}${advice.slice(1)}.${settled ? '' : ' The agent\'s own retries may still get through; stop it if they do not.'}`,
      evidence: [...evidence],
      ...(action === 'halt' ? { status: 'STALLED' as const } : {}),
      episode: storm.episode,
      details: { cause, retries: storm.retries },
    }));
  }

  endSession(): void {
    // Spans turns: the person re-sending while the requests fail is part of the storm.
  }

  /** The model answered: the storm is over. */
  private answered(session: SessionState, sink: FindingSink): void {
    this.chains.end(session, sink);
    const held = this.storms.peek(session);
    if (!held?.storm) return;
    sink.resolve(held.storm.episode);
    held.storm = undefined;
  }
}
